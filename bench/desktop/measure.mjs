// measure.mjs - one launch of the desktop benchmark (bench/desktop/run.sh):
// starts a program, times it from its launch to the web UI's welcome text
// being rendered, lets it settle, sums the memory of its process tree, quits
// it, and prints one JSON line on stdout.
//
//   node measure.mjs desktop  [options] -- HEARTH-DESKTOP ARGS...
//   node measure.mjs chromium [options] --serve 'JSON ARGV' -- CHROMIUM ARGS...
//
// desktop: the app is started with HEARTH_DESKTOP_PROBE=--probe FILE in its
// environment (run.sh sets it); the app itself writes the page's
// document.body.innerText there every 150 ms once the page is loaded. Ready
// is the first time that file holds --marker (read every 20 ms).
//
// chromium: first the server (--serve, a JSON array: hearth serve and its
// flags) is started and timed until it prints the web UI's address (it
// listens by then); then the browser, with {URL} in its arguments replaced
// by that address and --remote-debugging-pipe added: this script asks the
// page for document.body.innerText over the DevTools protocol every 150 ms,
// the desktop probe's period, so both sides are seen ready with the same
// granularity. Ready is the first answer that holds --marker. The browser's
// time runs from its own launch; the server's is reported apart.
//
// Memory: --settle ms after ready, PSS, RSS and private memory (USS) from
// /proc/PID/smaps_rollup, summed over the launched process and all its
// descendants (and, for chromium, over hearth serve too, reported apart);
// and the tree's pages counted once each ("alone", see distinct below).
//
// Options: --marker TEXT (default "What shall we work on?"), --settle MS
// (2000), --timeout MS (60000), --probe FILE, --poll MS (150),
// --log FILE (the programs' stdout and stderr), --adopt TEXT (processes whose
// command line holds TEXT belong to the launched program's tree: run.sh
// gives the side's home, which Chromium's crash handlers are started with).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

const now = () => Number(process.hrtime.bigint()) / 1e6 // ms, monotonic

function parseArgs(argv) {
  const o = { side: argv[0], marker: 'What shall we work on?', settle: 2000, timeout: 60000, poll: 150, probe: '', serve: null, adopt: '', log: '/dev/null', cmd: [] }
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--') {
      o.cmd = argv.slice(i + 1)
      break
    }
    const v = argv[++i]
    if (v === undefined) throw new Error(`${a} needs a value`)
    switch (a) {
      case '--marker': o.marker = v; break
      case '--settle': o.settle = Number(v); break
      case '--timeout': o.timeout = Number(v); break
      case '--poll': o.poll = Number(v); break
      case '--probe': o.probe = v; break
      case '--serve': o.serve = JSON.parse(v); break
      case '--log': o.log = v; break
      case '--adopt': o.adopt = v; break
      default: throw new Error(`unknown option ${a}`)
    }
  }
  if (!['desktop', 'chromium'].includes(o.side)) throw new Error('the first argument is desktop or chromium')
  if (o.cmd.length === 0) throw new Error('no command after --')
  if (o.side === 'desktop' && !o.probe) throw new Error('desktop needs --probe FILE')
  if (o.side === 'chromium' && !Array.isArray(o.serve)) throw new Error('chromium needs --serve \'["hearth","serve",...]\'')
  return o
}

// ---- processes ----

function children() {
  // ppid -> [pid], from /proc/PID/stat (field 4; the name, field 2, may hold spaces).
  const kids = new Map()
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    let stat
    try { stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8') } catch { continue }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (!kids.has(ppid)) kids.set(ppid, [])
    kids.get(ppid).push(Number(d))
  }
  return kids
}

// tree lists root and its descendants, and, when adopt is given, the
// processes whose command line holds it, with theirs: a process started
// by the program that left it (Chromium's crash handlers fork twice and
// are re-parented to init) is still the program's.
function tree(root, adopt = '') {
  const kids = children()
  const out = []
  const stack = [root]
  if (adopt) {
    for (const d of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(d) || Number(d) === process.pid) continue
      try { if (fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(adopt)) stack.push(Number(d)) } catch {}
    }
  }
  const seen = new Set()
  while (stack.length) {
    const p = stack.pop()
    if (seen.has(p)) continue
    seen.add(p)
    try { fs.accessSync(`/proc/${p}/stat`) } catch { continue }
    out.push(p)
    for (const c of kids.get(p) || []) stack.push(c)
  }
  return out
}

function memory(pid) {
  let text, comm
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8')
    comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return null
  }
  const kb = (k) => Number((text.match(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm')) || [0, 0])[1])
  let type = ''
  try {
    const m = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').match(/--type=([a-z-]+)/)
    if (m) type = m[1]
  } catch {}
  return { pid, comm, type, pss: kb('Pss'), rss: kb('Rss'), uss: kb('Private_Clean') + kb('Private_Dirty'), anon: kb('Anonymous') }
}

// distinct counts the physical pages the processes map, each page once
// however many of them map it (from /proc/PID/pagemap; frame numbers need
// root): what the tree holds in memory whatever other processes on the
// machine share with it. The kernel's PSS divides a page of a library
// among every process mapping it, so another WebKit application running
// at the time lowers the desktop's PSS (and makes pages no longer
// private, raising USS); this count does not move with them. It is split
// into data (anonymous memory, heap, stacks, shared-memory buffers: memfd,
// SysV, /dev/shm) and files (executables, libraries, fonts, caches mapped
// from disk; the twelve largest files are listed). Only mappings with
// resident pages (smaps Rss > 0) are read.
// Returns KiB, or null if pagemap gave no frame numbers (not root).
function distinct(pids) {
  const data = new Set()
  const files = new Set()
  const byFile = new Map()
  let sawPFN = false
  for (const pid of pids) {
    let smaps, fd
    try {
      smaps = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8')
      fd = fs.openSync(`/proc/${pid}/pagemap`, 'r')
    } catch {
      continue
    }
    try {
      let range = null
      for (const line of smaps.split('\n')) {
        const m = line.match(/^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+ *(.*)$/)
        if (m) {
          const path = m[3]
          const isFile = path.startsWith('/') && !/^\/(memfd:|SYSV|dev\/shm\/|dev\/zero)/.test(path)
          range = [BigInt('0x' + m[1]), BigInt('0x' + m[2]), isFile ? files : data, isFile ? path.replace(/ \(deleted\)$/, '') : '']
          continue
        }
        if (!range || !line.startsWith('Rss:')) continue
        const rss = Number(line.split(/\s+/)[1])
        const [start, end, set, file] = range
        range = null
        if (rss === 0) continue
        const pages = Number((end - start) / 4096n)
        const buf = Buffer.alloc(Math.min(pages, 1 << 16) * 8)
        for (let done = 0; done < pages;) {
          const n = Math.min(pages - done, buf.length / 8)
          const got = fs.readSync(fd, buf, 0, n * 8, Number((start / 4096n + BigInt(done)) * 8n))
          for (let i = 0; i < got / 8; i++) {
            const hi = buf.readUInt32LE(i * 8 + 4)
            if ((hi & 0x80000000) === 0) continue // not present
            const pfn = (hi & 0x7fffff) * 2 ** 32 + buf.readUInt32LE(i * 8) // bits 0-54
            if (pfn !== 0) sawPFN = true
            set.add(pfn)
            if (file) {
              if (!byFile.has(file)) byFile.set(file, new Set())
              byFile.get(file).add(pfn)
            }
          }
          done += n
          if (got < n * 8) break
        }
      }
    } catch {
      // the process went meanwhile
    } finally {
      fs.closeSync(fd)
    }
  }
  if (!sawPFN) return null
  for (const f of files) data.delete(f)
  const top = [...byFile].map(([f, set]) => [f, set.size * 4]).sort((a, b) => b[1] - a[1]).slice(0, 12)
  return { data: data.size * 4, files: files.size * 4, all: (data.size + files.size) * 4, top: Object.fromEntries(top) }
}

// sharers lists the processes outside pids that map a file whose path
// contains lib (another WebKit application, another Chromium): with them
// running, the tree's PSS is lower than it would be alone.
function sharers(pids, lib) {
  const mine = new Set(pids)
  const out = []
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d) || mine.has(Number(d)) || Number(d) === process.pid) continue
    try {
      if (fs.readFileSync(`/proc/${d}/maps`, 'utf8').includes(lib)) out.push(`${d} ${fs.readFileSync(`/proc/${d}/comm`, 'utf8').trim()}`)
    } catch {}
  }
  return out
}

function sum(procs) {
  const s = { pss: 0, rss: 0, uss: 0, anon: 0, n: procs.length }
  for (const p of procs) { s.pss += p.pss; s.rss += p.rss; s.uss += p.uss; s.anon += p.anon }
  return s
}

// cpu is the CPU time (user + system, ms) of the processes, and of the
// children they reaped: clock ticks of 10 ms (USER_HZ is 100 on Linux).
function cpu(pids) {
  let ticks = 0
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) // utime stime cutime cstime
    } catch {}
  }
  return ticks * 10
}

function alive(pid) {
  try { process.kill(pid, 0); return true } catch { return false }
}

// stop sends SIGTERM to the launched process (both programs quit on it),
// waits up to 10 s for it and its descendants to go, then SIGKILLs what is
// left. It returns how long the quit took, or -1 if something was killed.
async function stop(child, pids, adopt = '') {
  const t = now()
  const all = new Set(pids)
  for (const p of tree(child.pid, adopt)) all.add(p)
  try { child.kill('SIGTERM') } catch {}
  while (now() - t < 10000) {
    if (child.exitCode !== null || child.signalCode !== null) {
      if ([...all].every((p) => !alive(p))) return now() - t
    }
    await sleep(20)
  }
  for (const p of all) { try { process.kill(p, 'SIGKILL') } catch {} }
  return -1
}

// ---- the DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out) ----

class Pipe {
  constructor(child) {
    this.w = child.stdio[3]
    this.next = 1
    this.waiting = new Map()
    this.events = []
    let buf = ''
    child.stdio[4].on('data', (d) => {
      buf += d.toString('utf8')
      let i
      while ((i = buf.indexOf('\0')) >= 0) {
        const msg = JSON.parse(buf.slice(0, i))
        buf = buf.slice(i + 1)
        if (msg.id && this.waiting.has(msg.id)) {
          const { ok, fail } = this.waiting.get(msg.id)
          this.waiting.delete(msg.id)
          msg.error ? fail(new Error(msg.error.message)) : ok(msg.result)
        } else if (msg.method) {
          this.events.push(msg)
        }
      }
    })
    child.stdio[4].on('error', () => {})
    this.w.on('error', () => {})
  }
  send(method, params = {}, sessionId) {
    const id = this.next++
    return new Promise((ok, fail) => {
      this.waiting.set(id, { ok, fail })
      this.w.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0')
    })
  }
}

// ---- the launches ----

function open(log) {
  return fs.openSync(log, 'a')
}

async function waitDesktop(o, child, t0) {
  let polls = 0
  while (now() - t0 < o.timeout) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the app exited (${child.exitCode ?? child.signalCode}) before its page was ready`)
    let text = ''
    try { text = JSON.parse(fs.readFileSync(o.probe, 'utf8')).text || '' } catch {}
    polls++
    if (text.includes(o.marker)) return { readyMs: now() - t0, polls }
    await sleep(20)
  }
  throw new Error(`no "${o.marker}" in ${o.probe} after ${o.timeout} ms`)
}

async function waitChromium(o, child, t0) {
  const cdp = new Pipe(child)
  await cdp.send('Target.setDiscoverTargets', { discover: true })
  let session = null
  let polls = 0
  let url = ''
  while (now() - t0 < o.timeout) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`chromium exited (${child.exitCode ?? child.signalCode}) before the page was ready`)
    if (!session) {
      const page = cdp.events.find((e) => e.method === 'Target.targetCreated' && e.params.targetInfo.type === 'page')
      if (page) {
        url = page.params.targetInfo.url
        session = (await cdp.send('Target.attachToTarget', { targetId: page.params.targetInfo.targetId, flatten: true })).sessionId
      } else {
        await sleep(20)
        continue
      }
    }
    const tPoll = now()
    let text = ''
    try {
      const r = await cdp.send('Runtime.evaluate', { expression: 'document.body ? document.body.innerText : ""', returnByValue: true }, session)
      text = (r.result && r.result.value) || ''
    } catch {}
    polls++
    if (text.includes(o.marker)) return { readyMs: now() - t0, polls, url: url.replace(/token=[^&]*/, 'token=…') }
    await sleep(Math.max(0, o.poll - (now() - tPoll)))
  }
  throw new Error(`no "${o.marker}" on the page after ${o.timeout} ms`)
}

async function startServe(o) {
  const log = open(o.log)
  const t0 = now()
  const serve = spawn(o.serve[0], o.serve.slice(1), { stdio: ['ignore', 'pipe', log] })
  let out = ''
  const url = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`hearth serve printed no address in ${o.timeout} ms:\n${out}`)), o.timeout)
    serve.stdout.on('data', (d) => {
      out += d.toString('utf8')
      fs.writeSync(log, d)
      const m = out.match(/Open the web UI:\s*\n\s*(\S+)/)
      if (m) { clearTimeout(timer); ok(m[1]) }
    })
    serve.on('exit', (code) => { clearTimeout(timer); fail(new Error(`hearth serve exited (${code}):\n${out}`)) })
  })
  const ms = now() - t0
  serve.stdout.on('data', (d) => fs.writeSync(log, d))
  return { serve, url, ms }
}

async function main() {
  const o = parseArgs(process.argv.slice(2))
  const res = { side: o.side }
  let child = null
  let serve = null
  const cleanup = async () => {
    if (child) await stop(child, [], o.adopt)
    if (serve) await stop(serve, [])
  }
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, async () => { await cleanup(); process.exit(130) })
  }
  try {
    let cmd = o.cmd
    if (o.side === 'chromium') {
      const s = await startServe(o)
      serve = s.serve
      res.serve_ms = s.ms
      cmd = cmd.map((a) => a.replaceAll('{URL}', s.url))
      cmd = [...cmd.slice(0, 1), '--remote-debugging-pipe', ...cmd.slice(1)]
    } else {
      try { fs.unlinkSync(o.probe) } catch {}
    }
    const log = open(o.log)
    const stdio = o.side === 'chromium' ? ['ignore', log, log, 'pipe', 'pipe'] : ['ignore', log, log]
    const t0 = now()
    res.start_unix_ms = Date.now()
    child = spawn(cmd[0], cmd.slice(1), { stdio })
    const spawned = new Promise((ok, fail) => { child.once('spawn', ok); child.once('error', fail) })
    await spawned
    // Whatever the wait is stuck on (a DevTools answer that never comes),
    // the launch ends at the timeout or when the program exits.
    let timer
    const limit = new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`not ready after ${o.timeout} ms`)), o.timeout + 1000)
      child.once('exit', (code, sig) => fail(new Error(`the program exited (${code ?? sig}) before its page was ready`)))
    })
    limit.catch(() => {})
    const r = await Promise.race([o.side === 'desktop' ? waitDesktop(o, child, t0) : waitChromium(o, child, t0), limit])
    clearTimeout(timer)
    res.ready_ms = r.readyMs
    res.cpu_ms_at_ready = cpu(tree(child.pid, o.adopt))
    if (serve) res.serve_cpu_ms_at_ready = cpu([serve.pid])
    res.polls = r.polls
    if (r.url) res.page_url = r.url
    if (serve) res.total_ms = res.serve_ms + res.ready_ms

    await sleep(o.settle)
    const procs = tree(child.pid, o.adopt).map(memory).filter(Boolean)
    res.procs = procs
    res.mem = sum(procs)
    res.mem.alone = distinct(procs.map((p) => p.pid))
    if (serve) {
      const sp = tree(serve.pid).map(memory).filter(Boolean)
      res.serve_procs = sp
      res.serve_mem = sum(sp)
      res.serve_mem.alone = distinct(sp.map((p) => p.pid))
      res.total_mem = sum([...procs, ...sp])
      res.total_mem.alone = distinct([...procs, ...sp].map((p) => p.pid))
    }
    res.sharers = sharers([...procs, ...(res.serve_procs || [])].map((p) => p.pid), o.side === 'desktop' ? 'libwebkit2gtk-4.1' : '/usr/lib/chromium/')
    res.quit_ms = await stop(child, procs.map((p) => p.pid), o.adopt)
    child = null
    if (serve) {
      res.serve_quit_ms = await stop(serve, [])
      serve = null
    }
    res.ok = true
  } catch (e) {
    res.ok = false
    res.error = String(e.message || e)
    await cleanup()
  }
  process.stdout.write(JSON.stringify(res) + '\n')
  process.exit(res.ok ? 0 : 1)
}

main()
