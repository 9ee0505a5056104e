package match

import "testing"

func TestFindPlaceholder(t *testing.T) {
	cases := []struct {
		path, old, new string
		want           bool
	}{
		// Placeholders, in many spellings.
		{"a.go", "x", "func f() {\n\t// ... rest of code unchanged\n}", true},
		{"a.go", "x", "func f() {\n\t// ... rest of the code unchanged ...\n}", true},
		{"a.go", "x", "// ...existing code...\nfoo()", true},
		{"a.py", "x", "def f():\n    # ... existing code ...\n    return 1", true},
		{"a.py", "x", "# ...", true},
		{"a.c", "x", "int f() {\n  /* ... */\n}", true},
		{"a.c", "x", "/* ... remaining functions ... */", true},
		{"a.html", "x", "<body>\n<!-- ... -->\n</body>", true},
		{"a.html", "x", "<!-- ... rest of the page unchanged ... -->", true},
		{"a.md", "x", "<!-- ... existing content ... -->", true},
		{"a.tsx", "x", "return (\n  <div>\n    {/* ... */}\n  </div>\n)", true},
		{"a.ts", "x", "// rest of the file remains the same", true},
		{"a.ts", "x", "// Rest of the implementation...", true},
		{"a.js", "x", "// existing code here", true},
		{"a.js", "x", "// Keep existing methods unchanged", true},
		{"a.rb", "x", "# remaining code unchanged", true},
		{"a.sql", "x", "-- ... rest of the query ...", true},
		{"a.lua", "x", "-- ... unchanged ...", true},
		{"a.go", "x", "// …remaining cases…", true},
		{"a.go", "x", "func f() {\n\t...\n}", true},
		{"a.go", "x", "\tfoo() // ... rest of function unchanged", true},
		{"a.go", "x", "// ... code ...", true},
		{"a.java", "x", "    // ... other methods omitted for brevity ...", true},
		{"a.go", "x", "// everything else stays the same", true},

		// Legitimate code and comments.
		{"a.py", "x", "def stub():\n    ...\n", false},                 // Python's Ellipsis
		{"a.py", "x", "x = ...\ny = f(...)\n", false},                  // Ellipsis as a value
		{"a.pyi", "x", "def f(a: int) -> str: ...", false},             // stub file
		{"a.js", "x", "const b = [...a, ...rest];\nf(...args)", false}, // spread
		{"a.js", "x", "const { a, ...rest } = obj;", false},            // rest destructuring
		{"a.ts", "x", "function f(...rest: string[]) {}", false},       // rest parameter
		{"a.go", "x", "func f(xs ...int) { g(xs...) }", false},         // variadic
		{"a.c", "x", "int printf(const char *fmt, ...);", false},       // C varargs
		{"a.go", "x", "// Loading...", false},                          // a comment with an ellipsis
		{"a.go", "x", "// TODO: handle the other cases...", false},     // no omission word at the edge
		{"a.go", "x", "// Keep existing behaviour unchanged when the flag is off.", false},
		{"a.go", "x", "// The rest of the loop handles errors.", false},
		{"a.go", "x", "fmt.Println(\"...rest\")", false},                                        // in a string
		{"a.go", "x", "url := \"http://example.com/...\"", false},                               // URL
		{"a.md", "x", "## Rest of the code\n\nText...", false},                                  // a heading in prose
		{"a.md", "x", "...\n", false},                                                           // prose
		{"a.txt", "x", "# ... rest", false},                                                     // not a comment in text
		{"a.yaml", "x", "a: 1\n...\n", false},                                                   // YAML document end
		{"a.go", "x", "x := 1", false},                                                          // nothing like it
		{"a.go", "// ... rest of code unchanged\nx", "// ... rest of code unchanged\ny", false}, // the file's own line
		{"a.go", "x", "s := strings.Repeat(\".\", 3) // three dots...", false},
	}
	for _, c := range cases {
		line, got := FindPlaceholder(c.old, c.new, c.path)
		if got != c.want {
			t.Errorf("FindPlaceholder(%q, %q) = %v (%q), want %v", c.path, c.new, got, line, c.want)
		}
	}
}
