// summarize.mjs - the Markdown summary of bench/desktop/run.sh's runs.jsonl.
//
//   node bench/desktop/summarize.mjs runs.jsonl [env.txt]
//
// Measured rounds are those after round 0 (the warm-up, shown apart).
// Each cell is the median, then the lowest and highest in brackets; a ratio
// is computed per round (the two sides ran one after the other in it) and
// its median given, with the range.
import fs from 'node:fs'

const [file, envFile] = process.argv.slice(2)
const runs = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
const ok = runs.filter((r) => r.ok)
const failed = runs.filter((r) => !r.ok)

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const n = s.length
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
}
const fmt = (x, unit) => {
  if (!Number.isFinite(x)) return '—'
  if (unit === 'ms') return x >= 10000 ? `${(x / 1000).toFixed(1)} s` : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`
  if (unit === 'MB') return `${(x / 1024).toFixed(0)} MB`
  if (unit === 'x') return `${x.toFixed(2)}×`
  return String(x)
}
const cell = (xs, unit) => {
  xs = xs.filter((x) => typeof x === 'number' && Number.isFinite(x))
  if (xs.length === 0) return '—'
  if (xs.length === 1) return fmt(xs[0], unit)
  return `${fmt(median(xs), unit)} (${fmt(Math.min(...xs), unit)} – ${fmt(Math.max(...xs), unit)})`
}

const get = (round, side, launch) => ok.find((r) => r.round === round && r.side === side && r.launch === launch)
const rounds = [...new Set(ok.map((r) => r.round))].filter((r) => r > 0).sort((a, b) => a - b)

const measures = [
  ['start-up, first launch (new home)', 'first', 'ms', (r) => r.ready_ms, (r) => r.total_ms],
  ['start-up, repeat launch', 'repeat', 'ms', (r) => r.ready_ms, (r) => r.total_ms],
  ['CPU time until ready, repeat launch', 'repeat', 'ms', (r) => r.cpu_ms_at_ready, (r) => r.cpu_ms_at_ready + r.serve_cpu_ms_at_ready],
  ['PSS, first launch', 'first', 'MB', (r) => r.mem.pss, (r) => r.total_mem.pss],
  ['PSS, repeat launch', 'repeat', 'MB', (r) => r.mem.pss, (r) => r.total_mem.pss],
  ['RSS, repeat launch', 'repeat', 'MB', (r) => r.mem.rss, (r) => r.total_mem.rss],
  ['private (USS), repeat launch', 'repeat', 'MB', (r) => r.mem.uss, (r) => r.total_mem.uss],
  ['alone: every page once, repeat launch', 'repeat', 'MB', (r) => r.mem.alone?.all, (r) => r.total_mem.alone?.all],
  ['… of which data (anonymous, shared memory)', 'repeat', 'MB', (r) => r.mem.alone?.data, (r) => r.total_mem.alone?.data],
  ['… of which files (executables, libraries)', 'repeat', 'MB', (r) => r.mem.alone?.files, (r) => r.total_mem.alone?.files],
  ['processes', 'repeat', '', (r) => r.mem.n, (r) => r.total_mem.n],
]

const out = []
const p = (s = '') => out.push(s)
if (envFile && fs.existsSync(envFile)) {
  p('```')
  p(fs.readFileSync(envFile, 'utf8').trim())
  p('```')
  p()
}
p(`Measured rounds: ${rounds.length} (round 0, the warm-up, is below). Median (lowest – highest); ratios per round.`)
p()
p('| measure | desktop app | Chromium | Chromium + hearth serve | desktop ÷ Chromium | desktop ÷ (Chromium + serve) |')
p('| --- | --- | --- | --- | --- | --- |')
for (const [name, launch, unit, browserOnly, withServe] of measures) {
  const d = [], c = [], cs = [], r1 = [], r2 = []
  for (const round of rounds) {
    const dr = get(round, 'desktop', launch)
    const cr = get(round, 'chromium', launch)
    if (dr) d.push(browserOnly(dr))
    if (cr) { c.push(browserOnly(cr)); cs.push(withServe(cr)) }
    if (dr && cr && unit) { r1.push(browserOnly(dr) / browserOnly(cr)); r2.push(browserOnly(dr) / withServe(cr)) }
  }
  p(`| ${name} | ${cell(d, unit)} | ${cell(c, unit)} | ${cell(cs, unit)} | ${unit ? cell(r1, 'x') : ''} | ${unit ? cell(r2, 'x') : ''} |`)
}
{
  const s = rounds.map((round) => get(round, 'chromium', 'first')).filter(Boolean)
  const s2 = rounds.map((round) => get(round, 'chromium', 'repeat')).filter(Boolean)
  p()
  p(`hearth serve alone: start to its address ${cell([...s, ...s2].map((r) => r.serve_ms), 'ms')}, PSS ${cell([...s, ...s2].map((r) => r.serve_mem.pss), 'MB')} (all measured launches).`)
}

{
  const shared = ok.filter((r) => r.round > 0 && r.sharers && r.sharers.length)
  if (shared.length) {
    p()
    p(`Launches during which a process outside the tree mapped the same web engine (its PSS is then lower than alone): ${shared.length}`)
    for (const r of shared) p(`- round ${r.round} ${r.side} ${r.launch}: ${r.sharers.join(', ')}`)
  }
}

// Memory by process kind, repeat launches.
const kinds = (side) => {
  const byKind = new Map()
  for (const round of rounds) {
    const r = get(round, side, 'repeat')
    if (!r) continue
    const sums = new Map()
    for (const q of [...r.procs, ...(r.serve_procs || [])]) {
      let k = q.comm
      if (side === 'chromium') k = q.comm === 'hearth' ? 'hearth serve' : q.comm.startsWith('chrome_crashpad') ? 'chromium crash handler' : q.type ? `chromium ${q.type}` : 'chromium browser'
      const v = sums.get(k) || { pss: 0, rss: 0, anon: 0, n: 0 }
      v.pss += q.pss; v.rss += q.rss; v.anon += q.anon || 0; v.n++
      sums.set(k, v)
    }
    for (const [k, v] of sums) {
      if (!byKind.has(k)) byKind.set(k, [])
      byKind.get(k).push(v)
    }
  }
  return byKind
}
p()
p('Memory by process, repeat launches (median of the sum per kind):')
p()
p('| side | process | count | PSS | RSS | anonymous |')
p('| --- | --- | --- | --- | --- | --- |')
for (const side of ['desktop', 'chromium']) {
  for (const [k, vs] of kinds(side)) {
    p(`| ${side} | ${k} | ${median(vs.map((v) => v.n))} | ${fmt(median(vs.map((v) => v.pss)), 'MB')} | ${fmt(median(vs.map((v) => v.rss)), 'MB')} | ${fmt(median(vs.map((v) => v.anon)), 'MB')} |`)
  }
}

// The largest files, every page once.
p()
p('Largest files mapped, every page once, repeat launches (median):')
p()
p('| side | file | resident |')
p('| --- | --- | --- |')
for (const side of ['desktop', 'chromium']) {
  const per = new Map()
  for (const round of rounds) {
    const r = get(round, side, 'repeat')
    for (const [f, kb] of Object.entries(r?.mem.alone?.top || {})) {
      if (!per.has(f)) per.set(f, [])
      per.get(f).push(kb)
    }
  }
  const rows = [...per].map(([f, kbs]) => [f, median(kbs)]).sort((a, b) => b[1] - a[1]).slice(0, 8)
  for (const [f, kb] of rows) p(`| ${side} | \`${f}\` | ${fmt(kb, 'MB')} |`)
}

// The warm-up round.
p()
p('Round 0 (warm-up: the first start of the freshly copied binaries):')
p()
p('| launch | desktop app | Chromium | hearth serve | desktop PSS | Chromium + serve PSS |')
p('| --- | --- | --- | --- | --- | --- |')
for (const launch of ['first', 'repeat']) {
  const d = get(0, 'desktop', launch)
  const c = get(0, 'chromium', launch)
  p(`| ${launch} | ${d ? fmt(d.ready_ms, 'ms') : '—'} | ${c ? fmt(c.ready_ms, 'ms') : '—'} | ${c ? fmt(c.serve_ms, 'ms') : '—'} | ${d ? fmt(d.mem.pss, 'MB') : '—'} | ${c ? fmt(c.total_mem.pss, 'MB') : '—'} |`)
}
if (failed.length) {
  p()
  p(`Failed launches: ${failed.length}`)
  for (const r of failed) p(`- round ${r.round} ${r.side} ${r.launch}: ${r.error}`)
}
console.log(out.join('\n'))
