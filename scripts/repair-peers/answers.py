#!/usr/bin/env python3
"""Adds both peers' own answers to each case of fixtures/repair/peer-cases.jsonl, asking the
installed libraries: json_repair (PyPI `json-repair`, in this interpreter) and jsonrepair (npm
`jsonrepair`, through node, from NODE_PATH's node_modules).

Usage: scripts/repair-peers/answers.py NODE_MODULES < cases.jsonl > cases-with-answers.jsonl
       scripts/repair-peers/answers.py --check NODE_MODULES < fixtures/repair/peer-cases.jsonl

Each answer is {"value": V}, {"nothing": true} (no JSON came back) or {"error": MESSAGE}.
With --check, nothing is written: the answers recorded in the file are compared with the live
ones, and any case whose answer changed is named (exit 1), so a new peer version cannot change
the committed expectations unnoticed.
"""
import json
import subprocess
import sys

import json_repair

NODE_PROGRAM = r"""
const { jsonrepair } = require('jsonrepair')
const lines = require('fs').readFileSync(0, 'utf8').split('\n').filter(l => l.length)
for (const line of lines) {
  const input = JSON.parse(line)
  let answer
  try {
    const text = jsonrepair(input)
    answer = text.trim() === '' ? { nothing: true } : { value: JSON.parse(text) }
  } catch (e) {
    answer = { error: String(e.message) }
  }
  process.stdout.write(JSON.stringify(answer) + '\n')
}
"""


def python_answer(text):
    try:
        value = json_repair.repair_json(text, return_objects=True)
    except Exception as e:  # the library's own failure is its answer
        return {"error": f"{type(e).__name__}: {e}"}
    if value == "":
        return {"nothing": True}
    return {"value": value}


def node_answers(node_modules, inputs):
    feed = "".join(json.dumps(t) + "\n" for t in inputs)
    out = subprocess.run(
        ["node", "-e", NODE_PROGRAM],
        input=feed,
        capture_output=True,
        text=True,
        check=True,
        env={"NODE_PATH": node_modules, "PATH": "/usr/bin:/bin:/usr/local/bin"},
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    cases = [json.loads(line) for line in sys.stdin if line.strip()]
    js = node_answers(args[0], [c["input"] for c in cases])
    changed = 0
    for case, js_answer in zip(cases, js):
        live = {"json_repair": python_answer(case["input"]), "jsonrepair": js_answer}
        if check:
            for peer, answer in live.items():
                # Round-trip through JSON so that tuples, floats and the like compare as written.
                if json.loads(json.dumps(answer)) != case.get(peer):
                    changed += 1
                    print(f"case {case['id']}: {peer} now answers {json.dumps(answer)[:200]}, "
                          f"recorded {json.dumps(case.get(peer))[:200]}")
            continue
        case.update(live)
        print(json.dumps(case, ensure_ascii=False))
    if check:
        print(f"{len(cases)} cases, {changed} answers changed")
        sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
