#!/usr/bin/python3
"""Render chat-template goldens with Python's jinja2 in transformers' environment.

Reads trainer/chat/testdata/templates.json (template name -> source, licence, special
tokens), templates/<name>.jinja and conversations.jsonl, and writes goldens.jsonl: one line
per template x conversation with the rendered text (or the error jinja2 raised) and the
byte spans of {% generation %} blocks. The Go test (trainer/chat, TestGoldens) compares its
own rendering with these lines; CI does not run this script.

The environment is the one transformers builds in chat_template_utils.py:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with loop controls, a
{% generation %} extension, its tojson (json.dumps with ensure_ascii=False), raise_exception
and strftime_now. Conversations get vLLM's message post-processing: tool-call arguments
given as JSON text are parsed into objects, "reasoning" is passed as "reasoning_content".
strftime_now reads a fixed clock here (FIXED_NOW) so goldens do not change by date.

Use Debian's python3-jinja2 (scripts/setup-host.sh installs it):
    /usr/bin/python3 scripts/chat-goldens.py
"""
import datetime
import json
import os
import sys

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trainer", "chat", "testdata")
FIXED_NOW = datetime.datetime(2026, 3, 5, 14, 7, 9)


class GenerationSpans(Extension):
    """{% generation %}…{% endgeneration %}: records where each block's text lands."""

    tags = {"generation"}

    def __init__(self, environment):
        super().__init__(environment)
        self.blocks = None
        self.spans = None

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_span"), [], [], body).set_lineno(lineno)

    def _span(self, caller):
        text = caller()
        if self.blocks is not None:
            start = len("".join(self.blocks))
            self.spans.append((start, start + len(text)))
        return text


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(fmt):
    return FIXED_NOW.strftime(fmt)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[GenerationSpans, loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def postprocess(messages):
    out = []
    for m in messages:
        m = dict(m)
        if "reasoning" in m and "reasoning_content" not in m:
            m["reasoning_content"] = m.pop("reasoning")
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function") or {}
            if isinstance(fn.get("arguments"), str):
                try:
                    fn["arguments"] = json.loads(fn["arguments"])
                except ValueError:
                    pass
        out.append(m)
    return out


def render(env, template, special, conv):
    ext = env.extensions[GenerationSpans.identifier]
    tmpl = env.from_string(template)
    kwargs = dict(special)
    kwargs.update(conv.get("kwargs") or {})
    blocks, spans = [], []
    ext.blocks, ext.spans = blocks, spans
    try:
        for b in tmpl.generate(messages=postprocess(conv["messages"]), tools=conv.get("tools"), documents=None,
                               add_generation_prompt=conv.get("add_generation_prompt", False), **kwargs):
            blocks.append(b)
    finally:
        ext.blocks = ext.spans = None
    text = "".join(blocks)

    def byte(i):
        return len(text[:i].encode("utf-8"))

    return text, [[byte(s), byte(e)] for s, e in spans]


def write(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def probe(env, p):
    """Render one environment probe (a small template and its variables)."""
    ext = env.extensions[GenerationSpans.identifier]
    row = {"id": p["id"]}
    try:
        blocks, spans = [], []
        ext.blocks, ext.spans = blocks, spans
        for b in env.from_string(p["template"]).generate(**(p.get("vars") or {})):
            blocks.append(b)
        text = "".join(blocks)
        row["text"] = text
        row["generation"] = [[len(text[:s].encode("utf-8")), len(text[:e].encode("utf-8"))] for s, e in spans]
    except Exception as e:
        row["error"] = "%s: %s" % (type(e).__name__, e)
    finally:
        ext.blocks = ext.spans = None
    return row


def render_text(env, template, special, conv, messages, agp):
    c = dict(conv, messages=messages, add_generation_prompt=agp)
    return render(env, template, special, c)[0]


def splits(env, template, special):
    """Whether the first query's turn renders differently once a second query follows."""
    msgs = [{"role": "user", "content": "q1"}, {"role": "assistant", "content": "a1", "reasoning_content": "r1"},
            {"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2", "reasoning_content": "r2"}]
    try:
        whole = render_text(env, template, special, {}, msgs, False)
        first = render_text(env, template, special, {}, msgs[:2], False)
    except Exception:
        return False
    return not whole.startswith(first)


def is_query(m):
    c = m.get("content")
    return m.get("role") == "user" and not (isinstance(c, str) and c.startswith("<tool_response>") and c.endswith("</tool_response>"))


def prefix_mask(env, template, special, conv, full, split):
    """Assistant spans by rendering prefixes: the generation prompt before each assistant
    message must be a prefix of the text through it, and that a prefix of the text through
    its query segment; only turns of the last segment are masked in the whole text."""
    msgs = postprocess(conv["messages"])
    seg_end, nxt = [len(msgs)] * len(msgs), len(msgs)
    for i in range(len(msgs) - 1, -1, -1):
        seg_end[i] = nxt
        if split and is_query(msgs[i]):
            nxt = i
    if not split:
        seg_end = [len(msgs)] * len(msgs)
    enc = lambda s: len(s.encode("utf-8"))
    spans = []
    users = [i for i, m in enumerate(msgs) if m.get("role") == "user"]
    if users and not full.startswith(render_text(env, template, special, conv, msgs[:users[0] + 1], False)):
        raise ValueError("the rendering through the first user message is not a prefix of the whole")
    for i, m in enumerate(msgs):
        if m.get("role") != "assistant":
            continue
        p = render_text(env, template, special, conv, msgs[:i], True)
        f = render_text(env, template, special, conv, msgs[:i + 1], False)
        within = full if seg_end[i] == len(msgs) else render_text(env, template, special, conv, msgs[:seg_end[i]], False)
        if not f.startswith(p) or not within.startswith(f):
            raise ValueError("assistant message %d is not an append to the generation prompt before it" % i)
        if seg_end[i] == len(msgs):
            spans.append([enc(p), max(enc(p), enc(f.rstrip()))])
    return spans


def main():
    manifest = json.load(open(os.path.join(HERE, "templates.json"), encoding="utf-8"))
    convs = [json.loads(l) for l in open(os.path.join(HERE, "conversations.jsonl"), encoding="utf-8") if l.strip()]
    env = environment()
    out = []
    for name in sorted(manifest):
        with open(os.path.join(HERE, "templates", name + ".jinja"), encoding="utf-8", newline="") as f:
            template = f.read()
        for conv in convs:
            row = {"template": name, "conversation": conv["id"]}
            special = manifest[name]["special"]
            try:
                row["text"], row["generation"] = render(env, template, special, conv)
            except Exception as e:  # every jinja2/Python error is a refusal
                row["error"] = "%s: %s" % (type(e).__name__, e)
            if "text" in row and not row["generation"]:
                try:
                    row["mask"] = prefix_mask(env, template, special, conv, row["text"], splits(env, template, special))
                except Exception as e:
                    row["mask_error"] = "%s: %s" % (type(e).__name__, e)
            out.append(row)
    write(os.path.join(HERE, "goldens.jsonl"), out)
    probes = [json.loads(l) for l in open(os.path.join(HERE, "probes.jsonl"), encoding="utf-8") if l.strip()]
    write(os.path.join(HERE, "probes_golden.jsonl"), [probe(env, p) for p in probes])
    print("jinja2 %s: %d goldens, %d refusals" % (jinja2.__version__, len(out), sum("error" in r for r in out)), file=sys.stderr)


if __name__ == "__main__":
    main()
