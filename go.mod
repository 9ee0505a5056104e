module github.com/hearth-agent/hearth

go 1.26

require github.com/kaptinlin/jsonrepair v0.2.15

require (
	github.com/go-json-experiment/json v0.0.0-20251027170946-4849db3c2f7e // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
