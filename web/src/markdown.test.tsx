import { cleanup, render } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { Markdown, blocks, highlight, renderBlock } from './markdown'
import type { Links, Token } from 'marked'

afterEach(cleanup)

/** md renders Markdown as the page does, block by block, into a DOM tree. */
function md(text: string): HTMLElement {
  const { tokens, links } = blocks(text)
  const div = document.createElement('div')
  div.innerHTML = tokens.map((t) => renderBlock(t, links)).join('')
  return div
}

const dangerousAttr = /^on|^formaction$|^srcdoc$/i

/** unsafe lists what in a rendered tree could run script. */
function unsafe(root: HTMLElement): string[] {
  const out: string[] = []
  for (const el of root.querySelectorAll('*')) {
    const tag = el.tagName.toLowerCase()
    if (['script', 'iframe', 'object', 'embed', 'frame', 'frameset', 'base', 'meta', 'link', 'style', 'form', 'input', 'button', 'textarea', 'select'].includes(tag)) out.push(`<${tag}>`)
    for (const a of el.attributes) {
      if (dangerousAttr.test(a.name)) out.push(`${tag}[${a.name}]`)
      if (['href', 'src', 'action', 'xlink:href', 'formaction', 'data', 'poster', 'background'].includes(a.name.toLowerCase())) {
        const v = a.value.replace(/[\u0000-\u0020]/g, '').toLowerCase()
        if (v.startsWith('javascript:') || v.startsWith('vbscript:') || v.startsWith('data:text/html')) out.push(`${tag}[${a.name}=${a.value}]`)
      }
    }
  }
  return out
}

describe('Markdown: an answer is untrusted', () => {
  const attacks: [string, string][] = [
    ['a script tag', 'Hello <script>alert(1)</script> world'],
    ['a script block', '<script>\nfetch("/v1/sessions", {headers: {Authorization: "Bearer " + sessionStorage.token}})\n</script>'],
    ['an event handler on an image', '<img src=x onerror="alert(1)">'],
    ['an event handler in Markdown image syntax', '![x" onerror="alert(1)](http://x/y.png)'],
    ['a javascript: link in Markdown', '[click me](javascript:alert(document.domain))'],
    ['a javascript: link with entities', '[click](&#106;avascript:alert(1))'],
    ['a javascript: link in HTML', '<a href="javascript:alert(1)">x</a>'],
    ['a javascript: link with spaces and case', '<a href="  JaVaScRiPt:alert(1)">x</a>'],
    ['a javascript: reference link', '[x][r]\n\n[r]: javascript:alert(1)'],
    ['an autolink to javascript:', '<javascript:alert(1)>'],
    ['an iframe', '<iframe src="https://evil.example"></iframe>'],
    ['an iframe with srcdoc', '<iframe srcdoc="<script>alert(1)</script>"></iframe>'],
    ['an svg onload', '<svg onload="alert(1)"><circle r="1"/></svg>'],
    ['an svg script', '<svg><script>alert(1)</script></svg>'],
    ['an object', '<object data="javascript:alert(1)"></object>'],
    ['an embed', '<embed src="javascript:alert(1)">'],
    ['a form', '<form action="https://evil.example"><input name="token"><button formaction="javascript:alert(1)">go</button></form>'],
    ['a style tag', '<style>body{display:none}</style>'],
    ['a meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">'],
    ['a base tag', '<base href="https://evil.example/">'],
    ['a details ontoggle', '<details open ontoggle="alert(1)"><summary>x</summary></details>'],
    ['handlers inside a table', '| a |\n|---|\n| <img src=x onerror=alert(1)> |'],
    ['handlers inside a list', '- <b onmouseover="alert(1)">hover</b>'],
    ['a data:text/html link', '<a href="data:text/html,<script>alert(1)</script>">x</a>'],
    ['mutation XSS through noscript', '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'],
    ['math mXSS', '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>'],
  ]
  it.each(attacks)('%s is removed', (_, text) => {
    const root = md(text)
    expect(unsafe(root)).toEqual([])
    // (the text of an attack may stay, as text or inside a harmless attribute value)
    expect(root.innerHTML).not.toMatch(/<script/i)
    expect(root.querySelectorAll('[href^="javascript" i], [src^="javascript" i]')).toHaveLength(0)
  })

  it('keeps the harmless text around what it removed', () => {
    const root = md('Hello <script>alert(1)</script> **world**')
    expect(root.textContent).toContain('Hello')
    expect(root.querySelector('strong')?.textContent).toBe('world')
  })

  it('the Markdown component renders it safely too', () => {
    const { container } = render(<Markdown text={'# Title\n\n<img src=x onerror="alert(1)">\n\n[x](javascript:alert(1))\n\n<iframe src="x"></iframe>'} />)
    expect(container.querySelector('h1')?.textContent).toBe('Title')
    expect(unsafe(container)).toEqual([])
  })

  it('code in a fence is shown, not run, whatever its language', () => {
    for (const lang of ['html', 'js', 'nosuchlang', '']) {
      const root = md('```' + lang + '\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n```')
      expect(unsafe(root), lang).toEqual([])
      expect(root.querySelector('code')?.textContent, lang).toContain('<script>alert(1)</script>')
    }
  })

  it('a hostile info string does not break out of the code block', () => {
    const root = md('```"><img src=x onerror=alert(1)>\ncode\n```')
    expect(unsafe(root)).toEqual([])
    expect(root.querySelector('code')?.textContent).toBe('code')
  })
})

describe('Markdown: links', () => {
  const cases: [string, string][] = [
    ['a Markdown link', '[docs](https://example.com/docs)'],
    ['an autolink', 'see https://example.com/docs'],
    ['an HTML link', '<a href="https://example.com/docs">docs</a>'],
    ['an HTML link with its own target', '<a href="https://example.com/docs" target="_self" rel="opener">docs</a>'],
    ['a reference link', '[docs][d]\n\n[d]: https://example.com/docs'],
  ]
  it.each(cases)('%s opens in a new tab without opener', (_, text) => {
    const a = md(text).querySelector('a')!
    expect(a).not.toBeNull()
    expect(a.getAttribute('href')).toBe('https://example.com/docs')
    expect(a.getAttribute('target')).toBe('_blank')
    const rel = (a.getAttribute('rel') ?? '').split(/\s+/)
    expect(rel).toContain('noopener')
    expect(rel).not.toContain('opener')
  })
})

describe('Markdown: code', () => {
  it('highlights a known language with hljs classes', () => {
    const root = md('```go\nfunc main() {\n\treturn "x"\n}\n```')
    const code = root.querySelector('pre code')!
    expect(code.classList.contains('hljs')).toBe(true)
    expect(code.querySelector('.hljs-keyword')?.textContent).toBe('func')
    expect(code.querySelector('.hljs-string')).not.toBeNull()
    expect(code.textContent).toBe('func main() {\n\treturn "x"\n}')
  })

  it.each([
    ['ts', 'const x: number = 1', 'hljs-keyword'],
    ['py', 'def f():\n    return 1', 'hljs-keyword'],
    ['sh', 'echo "hi"', 'hljs-built_in'],
    ['json', '{"a": 1}', 'hljs-attr'],
    ['diff', '+added\n-removed', 'hljs-addition'],
    ['yml', 'a: 1', 'hljs-attr'],
  ])('highlights %s (an alias or a name)', (lang, code, cls) => {
    expect(md('```' + lang + '\n' + code + '\n```').querySelector('.' + cls)).not.toBeNull()
  })

  it('escapes a language it does not know, and no language', () => {
    for (const lang of ['brainfuck', '']) {
      const root = md('```' + lang + '\na < b && c > "d" \'e\'\n```')
      const code = root.querySelector('pre code')!
      expect(code.textContent).toBe('a < b && c > "d" \'e\'')
      expect(code.querySelector('span')).toBeNull()
    }
  })

  it('highlight() escapes unknown languages and marks up known ones', () => {
    expect(highlight('<b>&"\'', 'nosuchlang')).not.toMatch(/<b>|&"/)
    const d = document.createElement('div')
    d.innerHTML = highlight('<b>&"\'', 'nosuchlang')
    expect(d.textContent).toBe('<b>&"\'')
    expect(d.children).toHaveLength(0)
    expect(highlight('func f() {}', 'go')).toContain('<span class="hljs-keyword">func</span>')
    expect(highlight('func f() {}', ' GO  extra')).toContain('hljs-keyword')
    d.innerHTML = highlight('<script>x</script>', 'html')
    expect(d.querySelector('script')).toBeNull()
    expect(d.textContent).toBe('<script>x</script>')
  })
})

describe('blocks', () => {
  it('splits into top-level blocks, blank space dropped, and keeps reference links', () => {
    const { tokens, links } = blocks('# T\n\n\npara [x][r]\n\n```js\nx\n```\n\n[r]: https://e.com\n')
    expect(tokens.map((t) => t.type)).toEqual(['heading', 'paragraph', 'code', 'def'].filter((t) => tokens.some((k) => k.type === t)))
    expect(tokens.some((t) => t.type === 'space')).toBe(false)
    expect(links.r?.href).toBe('https://e.com')
  })
})

describe('blocks, lexing a streamed answer again from its last block', () => {
  const doc = [
    '# Title\n\nSome **bold** text and a [ref][r].\n\n',
    'Setext heading\n===\n\n',
    '- a\n- b\n\n  continued item\n\n',
    'para\n- c\n\n',
    '| x | y |\n|---|---|\n| 1 | 2 |\n\n',
    '```go\nfunc main() {\n\n\tfmt.Println("hi")\n}\n```\n\n',
    '    indented code\n\n',
    '> quote\ncontinues\n\n',
    '1. one\n2. two\n\n',
    '<div>\n\nhtml</div>\n\n',
    '[r]: https://example.com\n\n',
    // Loose numbered steps: "2" may arrive before its "."
    '1. first step\n\n2. second step\n\n   ```sh\n   make\n   ```\n\n3. third\n\n',
    // A lazy continuation line of a list item.
    '- item\n**Note**: still the item\n\n',
    // A definition before its use.
    '[d]: https://docs.example\n\nUse [the docs][d].\n\nlast line',
  ].join('')
  // The tokens, inline ones included, say everything the page renders
  // (and comparing them is much faster than rendering in jsdom).
  const html = (l: { tokens: Token[]; links: Links }) => JSON.stringify([l.tokens, l.links])
  const whole = html(blocks(doc))

  it('renders the same HTML as the whole text', () => {
    const l = blocks(doc, blocks(doc.slice(0, 100)))
    const render = (x: { tokens: Token[]; links: Links }) => x.tokens.map((t) => renderBlock(t, x.links)).join('')
    expect(render(l)).toBe(render(blocks(doc)))
    expect(render(l)).toContain('<a href="https://example.com"')
  })

  it('gives what lexing the whole text gives, whatever the text was cut at before', () => {
    for (let k = 0; k <= doc.length; k++) {
      expect(html(blocks(doc, blocks(doc.slice(0, k)))), `cut at ${k}: ${JSON.stringify(doc.slice(Math.max(0, k - 20), k))}`).toBe(whole)
    }
  })

  it('gives it too when the text grows a few characters at a time', () => {
    for (const step of [1, 3, 17]) {
      let l = blocks('')
      for (let k = step; k < doc.length + step; k += step) l = blocks(doc.slice(0, k), l)
      expect(html(l), `step ${step}`).toBe(whole)
    }
  })

  it('reads CRLF line ends as the whole text does', () => {
    const crlf = doc.replaceAll('\n', '\r\n')
    for (let k = 0; k <= crlf.length; k += 7) {
      expect(html(blocks(crlf, blocks(crlf.slice(0, k)))), `cut at ${k}`).toBe(whole)
    }
  })

  it('lexes from scratch a text that does not continue the last one', () => {
    const l = blocks('# Other\n\ntext', blocks(doc))
    expect(l.tokens.map((t) => t.type)).toEqual(['heading', 'paragraph'])
  })
})

describe("a model's HTML cannot cover or pose as the page", () => {
  const cases: [string, string, (el: HTMLElement) => void][] = [
    ['a link stretched over the page', '<a href="https://x.example" style="position:fixed;inset:0;z-index:9999">x</a>', (el) => expect(el.querySelector('[style]')).toBeNull()],
    ['the page\'s own classes', '<div class="tool-card state-approval backdrop">fake</div>', (el) => expect(el.querySelector('.tool-card, .backdrop')).toBeNull()],
    ['an id that shadows the page\'s', '<p id="root">x</p><a name="x">y</a>', (el) => expect(el.querySelector('[id], [name]')).toBeNull()],
    ['a dialog', '<dialog open>Allow?</dialog>', (el) => expect(el.querySelector('dialog')).toBeNull()],
  ]
  it.each(cases)('%s', (_name, src, check) => check(md(src)))

  it('keeps the classes the highlighter writes', () => {
    const el = md('```go\nfunc f() {}\n```')
    expect(el.querySelector('pre.code code.hljs.language-go .hljs-keyword')).not.toBeNull()
  })
})
