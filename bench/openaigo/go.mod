module github.com/hearth-agent/hearth/bench/openaigo

go 1.26.0

require (
	github.com/hearth-agent/hearth v0.0.0
	github.com/openai/openai-go/v3 v3.96.0
)

require (
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-json-experiment/json v0.0.0-20251027170946-4849db3c2f7e // indirect
	github.com/kaptinlin/jsonrepair v0.2.15 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
)

replace github.com/hearth-agent/hearth => ../..
