// Markdown for the model's answers: parsed by marked, highlighted by
// highlight.js, sanitised by DOMPurify (an answer is untrusted text: it
// must not run script in a page that holds the API token). A streamed
// answer is split into its top-level blocks and each finished block is
// rendered once; only the block still being written renders again.

import DOMPurify from 'dompurify'
import hljs from 'highlight.js/lib/core'
import bash from 'highlight.js/lib/languages/bash'
import c from 'highlight.js/lib/languages/c'
import cpp from 'highlight.js/lib/languages/cpp'
import css from 'highlight.js/lib/languages/css'
import diff from 'highlight.js/lib/languages/diff'
import go from 'highlight.js/lib/languages/go'
import ini from 'highlight.js/lib/languages/ini'
import java from 'highlight.js/lib/languages/java'
import javascript from 'highlight.js/lib/languages/javascript'
import json from 'highlight.js/lib/languages/json'
import markdown from 'highlight.js/lib/languages/markdown'
import python from 'highlight.js/lib/languages/python'
import rust from 'highlight.js/lib/languages/rust'
import sql from 'highlight.js/lib/languages/sql'
import typescript from 'highlight.js/lib/languages/typescript'
import xml from 'highlight.js/lib/languages/xml'
import yaml from 'highlight.js/lib/languages/yaml'
import { Marked, type Links, type Token, type Tokens } from 'marked'
import { memo, useMemo, useRef } from 'react'

const languages = {
  bash, c, cpp, css, diff, go, ini, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml,
}
for (const [name, lang] of Object.entries(languages)) hljs.registerLanguage(name, lang)
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' })
hljs.registerAliases(['toml'], { languageName: 'ini' })
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' })
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' })
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' })
hljs.registerAliases(['py'], { languageName: 'python' })
hljs.registerAliases(['rs'], { languageName: 'rust' })
hljs.registerAliases(['golang'], { languageName: 'go' })
hljs.registerAliases(['yml'], { languageName: 'yaml' })
hljs.registerAliases(['patch'], { languageName: 'diff' })

/** highlight returns code as highlighted HTML, or escaped when the language is unknown. */
export function highlight(code: string, lang: string): string {
  const name = (lang || '').trim().split(/\s+/)[0].toLowerCase()
  if (name && hljs.getLanguage(name)) {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value
  }
  return escapeHTML(code)
}

function escapeHTML(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`)
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    code({ text, lang }: Tokens.Code) {
      const name = (lang || '').trim().split(/\s+/)[0]
      const label = name ? `<span class="code-lang">${escapeHTML(name)}</span>` : ''
      return `<pre class="code">${label}<code class="hljs${name ? ` language-${escapeHTML(name)}` : ''}">${highlight(text, name)}</code></pre>\n`
    },
  },
})

const purify = DOMPurify()
// Classes the renderer itself writes; a model's own classes could dress its
// text as the page's controls.
const ownClass = /^(hljs(-[\w-]+)?|language-[\w+#-]+|code-lang|code|[\w-]+_)$/
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank')
    node.setAttribute('rel', 'noopener noreferrer')
  }
  const cls = node.getAttribute('class')
  if (cls !== null) {
    const kept = cls.split(/\s+/).filter((c) => ownClass.test(c))
    if (kept.length > 0) node.setAttribute('class', kept.join(' '))
    else node.removeAttribute('class')
  }
})

/** renderBlock renders one top-level Markdown block to safe HTML. */
export function renderBlock(token: Token, links: Links = {}): string {
  const list = [token] as Token[] & { links: Links }
  list.links = links
  const html = marked.parser(list)
  // No style attributes and no ids: a model's HTML must not cover, restyle
  // or pose as the page (a link stretched over the Allow button).
  return purify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'dialog'],
    FORBID_ATTR: ['style', 'id', 'name', 'tabindex', 'accesskey', 'autofocus', 'popover'],
  })
}

/** Lexed is Markdown split into its top-level blocks. */
export interface Lexed {
  /** The text, line ends made \n. */
  text: string
  /** Every top-level token, blank space included: their raws make up text. */
  all: Token[]
  /** The blocks to show: all without blank space. */
  tokens: Token[]
  /** The reference links the text defines. */
  links: Links
}

function lex(src: string, links?: Links): Token[] & { links: Links } {
  const lexer = new marked.Lexer(marked.defaults)
  // Definitions made before src (in the blocks kept) resolve links in it.
  if (links) Object.assign(lexer.tokens.links, links)
  return lexer.lex(src)
}

/**
 * blocks splits Markdown into its top-level blocks. Given what it returned
 * for a shorter text that this one continues (a streamed answer), it lexes
 * again only from the start of the last two blocks: the blocks before them
 * are finished (the next text can still join the last block, or turn it
 * into the second item of the list before it), so an update costs the size
 * of the open blocks, not of the whole answer. A text that no longer grows
 * is lexed whole (see Markdown), which settles anything this got wrong.
 */
export function blocks(text: string, prev?: Lexed): Lexed {
  text = text.replace(/\r\n?/g, '\n') // as the lexer does: the raws then add up
  let keep: Token[] = []
  let start = 0
  if (prev && text.startsWith(prev.text)) {
    // Keep every token before the last two blocks.
    let cut = prev.all.length
    for (let seen = 0; cut > 0 && seen < 2; ) if (prev.all[--cut].type !== 'space') seen++
    keep = prev.all.slice(0, cut)
    for (const t of keep) start += t.raw.length
  }
  // The definitions the kept blocks make (not prev's links: those include
  // the re-lexed blocks', perhaps half-written, and the first one wins).
  const kept: Links = {}
  for (const t of keep) if (t.type === 'def' && !(t.tag in kept)) kept[t.tag] = { href: t.href, title: t.title }
  const fresh = lex(text.slice(start), kept)
  const changed = (k: string) =>
    prev!.links[k]?.href !== fresh.links[k].href || prev!.links[k]?.title !== fresh.links[k].title
  if (keep.length > 0 && Object.keys(fresh.links).some(changed)) {
    // A new (or still growing) reference-link definition may resolve links
    // in the finished blocks: lex the whole text again.
    return blocks(text)
  }
  const all = [...keep, ...fresh]
  return { text, all, tokens: all.filter((t) => t.type !== 'space'), links: fresh.links }
}

interface BlockProps {
  raw: string
  token: Token
  links: Links
  /** Changes when the reference links do: they can change a finished block. */
  linksKey: string
}

// A block renders again only when its own text, or the links, changed:
// while an answer streams, that is the open block alone.
const Block = memo(
  function Block({ token, links }: BlockProps) {
    const html = renderBlock(token, links)
    return <div className="md-block" dangerouslySetInnerHTML={{ __html: html }} />
  },
  (a, b) => a.raw === b.raw && a.linksKey === b.linksKey,
)

/**
 * Markdown shows Markdown text, re-rendering only the blocks that changed.
 * live says the text is still growing (a streamed answer): it is then lexed
 * from its open blocks only, and whole once it stops.
 */
export function Markdown({ text, live = false }: { text: string; live?: boolean }) {
  const prev = useRef<Lexed>(undefined)
  const { tokens, links } = useMemo(() => (prev.current = blocks(text, live ? prev.current : undefined)), [text, live])
  const linksKey = useMemo(() => JSON.stringify(links), [links])
  return (
    <div className="markdown">
      {tokens.map((t, i) => (
        <Block key={i} raw={t.raw} token={t} links={links} linksKey={linksKey} />
      ))}
    </div>
  )
}
