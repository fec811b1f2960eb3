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
            try:
                row["text"], row["generation"] = render(env, template, manifest[name]["special"], conv)
            except Exception as e:  # every jinja2/Python error is a refusal
                row["error"] = "%s: %s" % (type(e).__name__, e)
            out.append(row)
    write(os.path.join(HERE, "goldens.jsonl"), out)
    probes = [json.loads(l) for l in open(os.path.join(HERE, "probes.jsonl"), encoding="utf-8") if l.strip()]
    write(os.path.join(HERE, "probes_golden.jsonl"), [probe(env, p) for p in probes])
    print("jinja2 %s: %d goldens, %d refusals" % (jinja2.__version__, len(out), sum("error" in r for r in out)), file=sys.stderr)


if __name__ == "__main__":
    main()
