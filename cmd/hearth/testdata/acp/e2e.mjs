// The editor's side of hearth acp's end-to-end test (cmd/hearth/acp_e2e_test.go
// runs it): the official ACP TypeScript SDK drives the built binary, whose
// model is the test's scripted fake, through a session's life:
//
//   1. a prompt whose reasoning and answer stream in order;
//   2. a turn that reads a file through the editor (its unsaved buffer is
//      what the model sees), writes one through the editor (its permission
//      request allowed), and is refused another (rejected);
//   3. a turn cancelled mid-answer;
//   4. in a new connection, the session loaded (its conversation replayed)
//      and continued.
//
// Every message Hearth writes is checked against the JSON schema the SDK
// ships for protocol version 1 (schema/v1/schema.json): the whole message
// against the schema's messages an agent sends, and its params or result
// against the definition of its method. The last line on stdout is a JSON
// report for the Go test; failures throw, and node exits 1.
//
// Environment: HEARTH_BIN (the binary), HEARTH_ACP_WORKSPACE (the folder of
// the sessions); the rest (HEARTH_HOME, OLLAMA_HOST) is hearth's.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { createRequire } from "node:module";
import assert from "node:assert/strict";

import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const bin = process.env.HEARTH_BIN;
const ws = process.env.HEARTH_ACP_WORKSPACE;
assert.ok(bin && ws, "HEARTH_BIN and HEARTH_ACP_WORKSPACE must be set");

// --- the schema ---------------------------------------------------------

const require = createRequire(import.meta.url);
const schemaPath = require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));
const ajv = new Ajv2020({ strict: false, allErrors: true });
const integer = (min, max) => ({ type: "number", validate: (n) => Number.isInteger(n) && n >= min && n <= max });
ajv.addFormat("int32", integer(-(2 ** 31), 2 ** 31 - 1));
ajv.addFormat("uint16", integer(0, 2 ** 16 - 1));
ajv.addFormat("uint32", integer(0, 2 ** 32 - 1));
ajv.addFormat("int64", integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat("uint64", integer(0, Number.MAX_SAFE_INTEGER));
ajv.addFormat("double", { type: "number", validate: (n) => Number.isFinite(n) });
ajv.addFormat("uri", (s) => URL.canParse(s));
ajv.addSchema(schema, "acp");
// The messages an agent sends: the first branch of the schema ("Agent").
const agentBranch = schema.anyOf.find((b) => b.title === "Agent");
assert.ok(agentBranch, "the schema has no Agent branch");
const agentMessage = ajv.compile({ $ref: "acp#/anyOf/" + schema.anyOf.indexOf(agentBranch) });
// The definition of each method's params or result, by side and kind.
function definition(side, method, suffix) {
  const name = Object.keys(schema.$defs).find(
    (k) => k.endsWith(suffix) && schema.$defs[k]["x-side"] === side && schema.$defs[k]["x-method"] === method,
  );
  assert.ok(name, `the schema defines no ${suffix} of ${side} method ${method}`);
  return { name, validate: ajv.getSchema("acp#/$defs/" + name) };
}
const errorDef = { name: "Error", validate: ajv.getSchema("acp#/$defs/Error") };

let validated = 0;
const invalid = [];
function check(what, validate, value, line) {
  if (!validate(value)) {
    invalid.push(`${what}: ${ajv.errorsText(validate.errors)}\n  in ${line}`);
  }
}

// --- a connection to hearth acp, its messages checked -------------------

// connect starts hearth acp with the client's handlers and returns the
// connection's context and a function that closes it and waits for hearth
// to exit.
function connect(app, name) {
  const child = spawn(bin, ["-m", "m", "acp"], { stdio: ["pipe", "pipe", "pipe"], env: process.env });
  let stderr = "";
  child.stderr.on("data", (b) => {
    stderr += b;
    process.stderr.write(`[${name} stderr] ${b}`);
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  // What the client asked, by request id: a response is checked against
  // its method's result.
  const asked = new Map();
  let sent = "";
  const toHearth = Writable.toWeb(child.stdin);
  const writer = toHearth.getWriter();
  const output = new WritableStream({
    async write(chunk) {
      sent += new TextDecoder().decode(chunk);
      let nl;
      while ((nl = sent.indexOf("\n")) >= 0) {
        const line = sent.slice(0, nl);
        sent = sent.slice(nl + 1);
        if (!line.trim()) continue;
        const msg = JSON.parse(line);
        if (msg.method && msg.id !== undefined) asked.set(JSON.stringify(msg.id), msg.method);
      }
      await writer.write(chunk);
    },
    async close() {
      await writer.close();
    },
  });
  let received = "";
  let open = true;
  const input = new ReadableStream({
    cancel() {
      open = false;
    },
    start(controller) {
      child.stdout.on("data", (b) => {
        received += b.toString("utf8");
        let nl;
        while ((nl = received.indexOf("\n")) >= 0) {
          const line = received.slice(0, nl);
          received = received.slice(nl + 1);
          inspect(line, asked);
          if (open) controller.enqueue(new TextEncoder().encode(line + "\n"));
        }
      });
      child.stdout.on("end", () => {
        if (received.trim()) inspect(received, asked);
        if (open) {
          open = false;
          controller.close();
        }
      });
    },
  });
  const stream = acp.ndJsonStream(output, input);
  const conn = app.connect(stream);
  return {
    agent: conn.agent,
    stderr: () => stderr,
    async close() {
      conn.close();
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 20000);
      const res = await exited;
      clearTimeout(timer);
      return res;
    },
  };
}

// inspect checks one line Hearth wrote: a JSON-RPC message of protocol
// version 1, nothing else.
function inspect(line, asked) {
  if (!line.trim()) {
    invalid.push("an empty line on stdout");
    return;
  }
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    invalid.push(`not JSON on stdout: ${line}`);
    return;
  }
  validated++;
  check("message", agentMessage, msg, line);
  if (msg.method !== undefined && msg.id !== undefined) {
    const d = definition("client", msg.method, "Request");
    check(`${msg.method} request (${d.name})`, d.validate, msg.params, line);
  } else if (msg.method !== undefined) {
    const side = msg.method.startsWith("$/") ? "protocol" : "client";
    const d = definition(side, msg.method, "Notification");
    check(`${msg.method} notification (${d.name})`, d.validate, msg.params, line);
  } else {
    const method = asked.get(JSON.stringify(msg.id));
    assert.ok(method, `a response to a request the client did not send: ${line}`);
    if (msg.error !== undefined) {
      check(`error of ${method}`, errorDef.validate, msg.error, line);
    } else {
      const d = definition("agent", method, "Response");
      check(`${method} response (${d.name})`, d.validate, msg.result, line);
    }
  }
}

// --- the editor ---------------------------------------------------------

const updates = new Map(); // session id → updates, in order
const waiters = [];
const permissions = []; // the requests, and the answers to give in order
const answers = ["allow_once", "reject_once"];
const reads = [];
const writes = [];
// An unsaved buffer: the editor's text of notes.txt, not the disk's.
const buffers = new Map([[join(ws, "notes.txt"), "the unsaved buffer of notes.txt\n"]]);

function onUpdate(n) {
  const list = updates.get(n.sessionId) ?? [];
  list.push(n.update);
  updates.set(n.sessionId, list);
  for (const w of [...waiters]) {
    if (w.test(n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(n);
    }
  }
}

function waitFor(test, what) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("timed out waiting for " + what)), 60000);
    waiters.push({ test, resolve: (n) => (clearTimeout(t), resolve(n)) });
  });
}

function editor() {
  return acp
    .client({ name: "hearth-acp-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => onUpdate(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const kind = answers[permissions.length];
      permissions.push(params);
      const option = params.options.find((o) => o.kind === kind);
      assert.ok(option, `no ${kind} option among ${JSON.stringify(params.options)}`);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      reads.push(params);
      const content = buffers.get(params.path) ?? readFileSync(params.path, "utf8");
      return { content };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      writes.push(params);
      mkdirSync(dirname(params.path), { recursive: true });
      writeFileSync(params.path, params.content);
      return {};
    });
}

const text = (update) => (update.content?.type === "text" ? update.content.text : "");
const kinds = (list) => list.map((u) => u.sessionUpdate);

// --- the story ----------------------------------------------------------

const report = {};
const capabilities = { fs: { readTextFile: true, writeTextFile: true } };

// 1. A prompt: the reasoning, then the answer, in order.
let c = connect(editor(), "first");
const init = await c.agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: capabilities,
  clientInfo: { name: "hearth-acp-e2e", version: "1" },
});
assert.equal(init.protocolVersion, 1);
assert.equal(init.agentCapabilities.loadSession, true);
assert.equal(init.agentInfo.name, "hearth");
const created = await c.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
const sid = created.sessionId;
report.session = sid;
assert.match(sid, /^s-/);
// An untrusted folder: Ask and Plan only.
assert.deepEqual(created.modes.availableModes.map((m) => m.id).sort(), ["default", "plan"]);
assert.equal(created.modes.currentModeId, "default");

let res = await c.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "hello" }] });
assert.equal(res.stopReason, "end_turn");
let got = updates.get(sid);
assert.deepEqual(
  got.map((u) => [u.sessionUpdate, text(u)]),
  [
    ["agent_thought_chunk", "The user greets me."],
    ["agent_message_chunk", "Hello"],
    ["agent_message_chunk", ", "],
    ["agent_message_chunk", "world"],
  ],
);

// 2. Tools: a read through the editor, a write allowed, one rejected.
updates.set(sid, []);
res = await c.agent.request(acp.methods.agent.session.prompt, {
  sessionId: sid,
  prompt: [{ type: "text", text: "note it down" }, { type: "resource_link", name: "notes.txt", uri: "file://" + join(ws, "notes.txt") }],
});
assert.equal(res.stopReason, "end_turn");
got = updates.get(sid);
const calls = got.filter((u) => u.sessionUpdate === "tool_call");
assert.deepEqual(
  calls.map((u) => [u.toolCallId, u.kind, u.status]),
  [
    ["call_read", "read", "pending"],
    ["call_a", "edit", "pending"],
    ["call_b", "edit", "pending"],
  ],
);
const finals = new Map();
for (const u of got.filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"))) {
  finals.set(u.toolCallId, u);
}
assert.equal(finals.get("call_read").status, "completed");
assert.match(JSON.stringify(finals.get("call_read").content), /the unsaved buffer of notes\.txt/);
assert.equal(finals.get("call_a").status, "completed");
assert.ok(
  finals.get("call_a").content.some((c) => c.type === "diff" && c.path === join(ws, "a.txt") && c.newText === "A\n"),
  "the write's result carries its diff",
);
assert.equal(finals.get("call_b").status, "failed");
assert.deepEqual(reads.map((r) => [r.sessionId, r.path]), [[sid, join(ws, "notes.txt")]]);
assert.deepEqual(writes.map((w) => [w.sessionId, w.path, w.content]), [[sid, join(ws, "a.txt"), "A\n"]]);
assert.equal(readFileSync(join(ws, "a.txt"), "utf8"), "A\n");
assert.ok(!existsSync(join(ws, "b.txt")), "the rejected write happened");
assert.equal(permissions.length, 2);
assert.deepEqual(permissions.map((p) => p.toolCall.toolCallId), ["call_a", "call_b"]);
for (const p of permissions) {
  assert.deepEqual(p.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
  assert.equal(p.sessionId, sid);
}
const answer = got.filter((u) => u.sessionUpdate === "agent_message_chunk").map(text).join("");
assert.equal(answer, "One written, one refused.");
// The plan the model keeps.
const plans = got.filter((u) => u.sessionUpdate === "plan");
assert.deepEqual(plans.at(-1).entries.map((e) => [e.content, e.status]), [
  ["Read the notes", "completed"],
  ["Write them down", "in_progress"],
]);

// 3. Cancel mid-answer: the turn ends as cancelled.
updates.set(sid, []);
const story = c.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "tell me a story" }] });
await waitFor((n) => n.sessionId === sid && text(n.update) === "Once upon", "the story's first words");
await c.agent.notify(acp.methods.agent.session.cancel, { sessionId: sid });
res = await story;
assert.equal(res.stopReason, "cancelled");
let exit = await c.close();
assert.deepEqual(exit, { code: 0, signal: null }, "hearth acp did not exit cleanly:\n" + c.stderr());

// 4. A new connection loads the session, and continues it.
updates.clear();
c = connect(editor(), "second");
await c.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: capabilities });
const listed = await c.agent.request(acp.methods.agent.session.list, { cwd: ws });
assert.ok(
  listed.sessions.some((s) => s.sessionId === sid && s.cwd === ws),
  "session/list lists the session: " + JSON.stringify(listed),
);
const loaded = await c.agent.request(acp.methods.agent.session.load, { sessionId: sid, cwd: ws, mcpServers: [] });
assert.equal(loaded.modes.currentModeId, "default");
got = updates.get(sid);
const shown = got.filter((u) => ["user_message_chunk", "agent_message_chunk"].includes(u.sessionUpdate)).map((u) => [u.sessionUpdate, text(u)]);
assert.deepEqual(shown, [
  ["user_message_chunk", "hello"],
  ["agent_message_chunk", "Hello, world"],
  ["user_message_chunk", "note it down @notes.txt"],
  ["agent_message_chunk", "One written, one refused."],
  ["user_message_chunk", "tell me a story"],
  ["agent_message_chunk", "Once upon"],
]);
assert.deepEqual(
  got.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.toolCallId),
  ["call_read", "call_a", "call_b"],
);
assert.equal(got.filter((u) => u.sessionUpdate === "agent_thought_chunk").map(text).join(""), "The user greets me.");
assert.deepEqual(kinds(got).at(-1), "plan");

updates.set(sid, []);
res = await c.agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "go on" }] });
assert.equal(res.stopReason, "end_turn");
assert.equal(updates.get(sid).map(text).join(""), "And they lived happily.");
exit = await c.close();
assert.deepEqual(exit, { code: 0, signal: null }, "hearth acp did not exit cleanly:\n" + c.stderr());

// --- the schema's verdict -----------------------------------------------

if (invalid.length > 0) {
  throw new Error(`${invalid.length} of the ${validated} messages Hearth sent do not validate against ${schemaPath}:\n` + invalid.join("\n"));
}
assert.ok(validated > 30, `only ${validated} messages were checked`);
report.validated = validated;
report.schema = schemaPath;
console.log(JSON.stringify(report));
