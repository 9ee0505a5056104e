#!/usr/bin/env bash
# peer-models.sh - create the scripted models that llm/integration_test.go
# needs on the offline Ollama peer (../shared/ollama-peer, relative to the
# repository root). The peer must already be up:
#
#   ../shared/ollama-peer/up.sh          # build (first time) and start it
#   scripts/peer-models.sh               # add the scripted models below
#   HEARTH_OLLAMA_URL=http://127.0.0.1:11555 go test -race ./llm/ -run Integration -v
#
# The tests use `tiny` and `tiny-tools` (made by up.sh itself) and the
# models below (tiny-answer, at the end, has a window for a whole agent
# prompt):
#
#   tiny-fenced  always writes a ```json fenced block calling get_weather,
#                which Ollama does not parse as a tool call (its parser for
#                this template looks for <tool_call>), so Hearth must;
#   tiny-think   always writes a <think>…</think> block before its answer,
#                which Ollama leaves in the content for a model without the
#                thinking capability, so Hearth must move it to thinking;
#   tiny-lone-think  the same without the opening tag (below).
#
# Safe to re-run: creating a model again replaces it with the same one.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
UP=${PEER_UP:-$ROOT/../shared/ollama-peer/up.sh}
[ -x "$UP" ] || { echo "peer script not found at $UP (set PEER_UP)" >&2; exit 1; }

"$UP" model tiny-fenced \
  '["```json\n", "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}", "\n```"]' \
  'You are a tiny scripted test model that writes its tool calls as fenced JSON.'

"$UP" model tiny-think \
  '["<think>", "The user greets me.", " I should greet back.", "</think>", "Hello", " there!"]' \
  'You are a tiny scripted test model that thinks aloud in <think> tags.'

# tiny-lone-think  writes its reasoning, then a lone </think> (no opening
#              tag: a template that opens the block in the prompt, as Qwen3
#              "thinking" and DeepSeek-R1 do), then its answer; Ollama leaves
#              both in the content for a model without the thinking
#              capability, so Hearth must see the reasoning for what it was.
"$UP" model tiny-lone-think \
  '["The user greets me.", " I should greet back.", "</think>", "Hello", " there!"]' \
  'You are a tiny scripted test model whose template opened a think block.'

# tiny-read    always calls read_file on notes.txt (Hermes style, which Ollama
#              parses into a native call): an agent loop driven by it reads
#              the file, gets the result back, and calls again forever.
"$UP" model tiny-read \
  '["<tool_call>", "\n{\"name\": \"read_file\", ", "\"arguments\": {\"file_path\": \"notes.txt\"}}", "\n</tool_call>"]' \
  'You are a tiny scripted test model that always reads notes.txt.'

# tiny-reader  tiny-read in a window long enough for Hearth's whole prompt:
#              cmd/hearth's TestPeerResponses runs the real binary with
#              --provider responses against it (Ollama's /v1/responses, which
#              takes no num_ctx and cuts an overlong prompt silently).
PEER_CTX=32768 PEER_NUM_CTX=16384 "$UP" model tiny-reader \
  '["<tool_call>", "\n{\"name\": \"read_file\", ", "\"arguments\": {\"file_path\": \"notes.txt\"}}", "\n</tool_call>"]' \
  'You are a tiny scripted test model that always reads notes.txt.'

# tiny-answer  always answers "Done." in a window long enough for Hearth's
#              whole prompt (the tokenizer spends a token per byte): the
#              real binary runs whole sessions against it, and
#              cmd/hearth's TestPeerPromptCache measures Ollama's prompt
#              cache across turns with it.
PEER_CTX=32768 PEER_NUM_CTX=16384 "$UP" model tiny-answer \
  '["Done", "."]' \
  'You are a tiny scripted test model that always answers Done.'

# tiny-prompted  a model WITHOUT tool support (PEER_TOOLS=0: /api/show says
#              only "completion", and Ollama refuses a request carrying
#              tools) that answers in Hearth's prompted tool protocol: it
#              always writes a <tool_call> reading notes.txt as text.
#              cmd/hearth's TestPeerPromptedProtocol runs the real binary
#              against it on Ollama's native API and on /v1.
PEER_TOOLS=0 PEER_CTX=32768 PEER_NUM_CTX=16384 "$UP" model tiny-prompted \
  '["<tool_call>", "{\"name\": \"read_file\", ", "\"arguments\": {\"file_path\": \"notes.txt\"}}", "</tool_call>"]' \
  'You are a tiny scripted test model that writes its tool calls as text.'

# tiny-garbled  the same without tools, but its call is not JSON: Hearth
#              sends it a correction each time, then stops the turn.
PEER_TOOLS=0 PEER_CTX=32768 PEER_NUM_CTX=16384 "$UP" model tiny-garbled \
  '["<tool_call>", "{name: read_file, ", "arguments: notes.txt", "</tool_call>"]' \
  'You are a tiny scripted test model that cannot write JSON.'
