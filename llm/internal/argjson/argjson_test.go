package argjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     string // JSON, compared as values; "" means an error is expected
		repaired bool
		errHas   string
	}{
		{"object", `{"city":"Paris"}`, `{"city":"Paris"}`, false, ""},
		{"empty", ``, `{}`, false, ""},
		{"spaces", "  \n", `{}`, false, ""},
		{"null", `null`, `{}`, false, ""},
		{"empty string", `""`, `{}`, false, ""},
		{"double encoded", `"{\"city\":\"Paris\"}"`, `{"city":"Paris"}`, true, ""},
		{"trailing comma", `{"city": "Paris",}`, `{"city":"Paris"}`, true, ""},
		{"single quotes", `{'city': 'Paris'}`, `{"city":"Paris"}`, true, ""},
		{"python literals", `{"a": True, "b": None, "c": False}`, `{"a":true,"b":null,"c":false}`, true, ""},
		{"unquoted keys", `{city: "Paris"}`, `{"city":"Paris"}`, true, ""},
		{"missing final brace", `{"a": {"b": 1}`, `{"a":{"b":1}}`, true, ""},
		{"fenced", "```json\n{\"a\": 1,}\n```", `{"a":1}`, true, ""},
		{"apostrophe in value", `{"text": "don't", "n": 1,}`, `{"text":"don't","n":1}`, true, ""},
		{"cut off in string", `{"path": "notes.t`, "", false, "cut off"},
		{"cut off after a number", `{"n": 1`, "", false, "cut off"},
		{"cut off in a literal", `{"flag": tr`, "", false, "cut off"},
		{"cut off after a comma", `{"cmd":"ls","args":["-l", `, "", false, "cut off"},
		{"missing brace after a string", `{"path": "a.txt"`, `{"path":"a.txt"}`, true, ""},
		{"cut off in single-quoted string", `{'path': 'notes.t`, "", false, "cut off"},
		{"array", `[1,2]`, "", false, "must be a JSON object"},
		{"number", `42`, "", false, "must be a JSON object"},
		{"prose", `please read the file`, "", false, "not a JSON object"},
		{"two objects", `{"a":1} {"b":2}`, "", false, "not valid JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, rep, err := Normalize([]byte(tc.in))
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("want error containing %q, got %s, %v", tc.errHas, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("result is not JSON: %s", got)
			}
			json.Unmarshal([]byte(tc.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if rep != tc.repaired {
				t.Fatalf("repaired = %v, want %v", rep, tc.repaired)
			}
		})
	}
}

// TestNormalizeLargeIsNotRepaired: input above MaxRepair that would need
// repair is refused at once (the repair is superlinear), with a message
// that asks for valid JSON; valid JSON of that size is read, and broken
// input just under the limit is still repaired.
func TestNormalizeLargeIsNotRepaired(t *testing.T) {
	broken := `{` + strings.Repeat(`'k':'v',`, (1<<20)/8) + `}`
	if _, _, err := Normalize([]byte(broken)); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "too large to repair") ||
		!strings.Contains(err.Error(), "send valid JSON") || !strings.Contains(err.Error(), "1025 KiB") {
		t.Fatalf("1 MiB of broken JSON: %v", err)
	}
	valid := `{"content":"` + strings.Repeat("x", 1<<20) + `"}`
	if got, rep, err := Normalize([]byte(valid)); err != nil || rep || len(got) != len(valid) {
		t.Fatalf("1 MiB of valid JSON: %v, repaired %v", err, rep)
	}
	under := `{"content": '` + strings.Repeat("x", MaxRepair-20) + `',}`
	if len(under) > MaxRepair {
		t.Fatalf("test input of %d bytes", len(under))
	}
	if _, rep, err := Normalize([]byte(under)); err != nil || !rep {
		t.Fatalf("broken JSON under the limit: %v, repaired %v", err, rep)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{'a': 'b',}`, `{"a": [1, 2`, `"{\"a\":1}"`, "```json\n{}\n```", `{"p": "x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, _, err := Normalize([]byte(in))
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("Normalize(%q) = %q, not a JSON object: %v", in, got, err)
		}
	})
}
