// What one update of a streamed answer costs to lex: the page lexes again
// only from the start of the open (last) block; lexing the whole answer
// again is what that avoids. (Rendering is per block too: finished blocks
// are memoised, so an update renders the open block alone.)
//
//   cd web && npx vitest bench --run      (docs/benchmarks.md)
import { bench, describe } from 'vitest'
import { blocks } from './markdown'

// A long answer: sections of prose, a list and a Go block.
const section = (i: number) =>
  `## Step ${i}\n\nThe handler reads the **request**, checks the \`token\`, and calls [the store](https://example.com/${i}).\n\n` +
  `- first point ${i}\n- second point\n\n` +
  '```go\nfunc handle(w http.ResponseWriter, r *http.Request) {\n\tif r.Method != http.MethodGet {\n\t\thttp.Error(w, "no", 405)\n\t}\n}\n```\n\n' +
  'The last paragraph of the step is still being written, a few words at a time'

for (const n of [6, 60, 300]) {
  const answer = Array.from({ length: n }, (_, i) => section(i)).join('\n\n')
  const before = blocks(answer.slice(0, -8)) // the previous update
  describe(`one update of a ${Math.round(answer.length / 1024)} KB answer`, () => {
    bench('incremental: lex from the open blocks', () => {
      blocks(answer, before)
    })
    bench('whole: lex the whole answer', () => {
      blocks(answer)
    })
  })
}
