"""Realistic tool outputs for the Context-mode tests (written for the tests, shaped like the real thing)."""

from __future__ import annotations

import json

PYTEST_FAILURE = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.7, pytest-8.3.3, pluggy-1.5.0\n"
    "rootdir: /repo\n"
    "collected 412 items\n\n"
    + "".join(
        f"tests/test_mod{i}.py::test_case_{i} PASSED{' ' * 30}[{i % 100:3d}%]\n" for i in range(400)
    )
    + "tests/test_parser.py::test_parse_header FAILED                        [ 98%]\n"
    "\n=================================== FAILURES ===================================\n"
    "______________________________ test_parse_header _______________________________\n"
    "Traceback (most recent call last):\n"
    '  File "/repo/tests/test_parser.py", line 42, in test_parse_header\n'
    "    header = parse_header(raw)\n"
    '  File "/repo/src/parser.py", line 118, in parse_header\n'
    "    size = int(fields[3])\n"
    "ValueError: invalid literal for int() with base 10: 'abc'\n"
    "WARNING: DeprecationWarning: pkg_resources is deprecated as an API\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_parser.py::test_parse_header - ValueError: invalid literal\n"
    "======================== 1 failed, 411 passed in 12.34s ========================\n"
    "Command exited with code 1\n"
)

TSC_ERRORS = (
    "".join(
        f"src/modes/interactive/mode.ts({100 + 7 * i},{i % 40 + 1}): error TS2339: "
        f"Property '{name}' does not exist on type 'InteractiveMode'.\n"
        for i, name in enumerate(["agent", "session", "agent", "settings", "agent"] * 30)
    )
    + "Found 150 errors in 1 file.\n"
)

PYTHON_TRACE = (
    "Traceback (most recent call last):\n"
    + "".join(
        f'  File "/srv/app/handlers/h{i}.py", line {10 + i}, in handle_{i}\n    return next_handler(req)\n'
        for i in range(120)
    )
    + "KeyError: 'user_id'\n"
)

JS_TRACE = "TypeError: Cannot read properties of undefined (reading 'map')\n" + "".join(
    f"    at render{i} (/app/src/components/List{i}.tsx:{20 + i}:{5 + i % 9})\n" for i in range(150)
)

JAVA_TRACE = (
    'Exception in thread "main" java.lang.IllegalStateException: pool closed\n'
    + "".join(f"\tat com.example.pool.Pool{i}.get(Pool{i}.java:{30 + i})\n" for i in range(120))
    + "Caused by: java.io.IOException: broken pipe\n"
    + "".join(f"\tat com.example.net.Conn{i}.write(Conn{i}.java:{50 + i})\n" for i in range(60))
    + "\t... 42 more\n"
)

GO_PANIC = (
    "panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\n"
    + "".join(
        f"main.step{i}(0xc000012345, 0x{i:x})\n\t/home/u/proj/cmd/step{i}.go:{12 + i} +0x1d\n"
        for i in range(150)
    )
    + "exit status 2\n"
)

RUST_PANIC = (
    "thread 'main' panicked at src/parser/lexer.rs:88:17:\nunexpected token `}`\n"
    "stack backtrace:\n"
    + "".join(
        f"  {i}: proj::parser::step{i}\n             at ./src/parser/step{i}.rs:{40 + i}:9\n"
        for i in range(150)
    )
)

HTML_PAGE = (
    "<!DOCTYPE html><html><head><title>Acme Store - Checkout</title>"
    "<style>body{font-family:sans-serif}.x{color:red}</style>"
    "<script>window.analytics={track:function(){}};console.log('secret-script-text')</script>"
    "</head><body><nav><a href='/'>Home</a> | <a href='/cart'>Cart (3)</a></nav>"
    "<h1>Checkout</h1><form action='/pay' method='post'>"
    "<label for='email'>Email address</label><input id='email' name='email' type='email' "
    "placeholder='you@example.com'>"
    "<label>Card number <input name='card' autocomplete='cc-number'></label>"
    "<select name='country'><option>France</option><option>Germany</option></select>"
    "<textarea name='notes' placeholder='Delivery notes'></textarea>"
    "<button type='submit'>Pay now</button></form>"
    + "".join(
        f"<div class='product'><p>Product {i}: a very nice item with a long description {i}</p>"
        f"<a href='/p/{i}'>View product {i}</a></div>"
        for i in range(200)
    )
    + "<script>trackEverything()</script></body></html>"
)

A11Y_SNAPSHOT = "\n".join(
    [
        "- banner:",
        '  - link "Home" [ref=e1]:',
        "    - /url: /",
        '  - heading "Dashboard" [level=1] [ref=e2]',
    ]
    + [
        line
        for i in range(150)
        for line in (
            f"  - generic [ref=g{i}]:",
            f'    - link "Report {i}" [ref=r{i}]:',
            f"      - /url: /reports/{i}",
            f'    - button "Delete report {i}" [ref=b{i}]',
            f'    - textbox "Rename report {i}" [ref=t{i}]',
            f"    - paragraph [ref=p{i}]: Report {i} was created by someone on some day",
        )
    ]
)

CSV_TABLE = "id,name,email,score\n" + "".join(
    f"{i},user{i},user{i}@example.com,{i * 7 % 100}\n" for i in range(2000)
)

PSQL_RESULT = (
    " id |   name   | status \n----+----------+--------\n"
    + "".join(f" {i:3d} | job{i:<5d} | done   \n" for i in range(500))
    + "(500 rows)\n"
)

MARKDOWN_TABLE = "| file | lines | status |\n|---|---:|---|\n" + "".join(
    f"| src/mod{i}.py | {i * 13} | ok |\n" for i in range(400)
)

JSON_RECORDS = json.dumps(
    [
        {"id": i, "title": f"Issue {i}", "labels": ["bug", "p1"], "body": "text " * 30}
        for i in range(300)
    ],
    indent=2,
)

JSON_OBJECT = json.dumps(
    {
        "name": "service",
        "version": "2.4.1",
        "config": {"retries": 3, "timeout_s": 30, "hosts": [f"h{i}.internal" for i in range(100)]},
        "items": [{"sku": f"S{i}", "qty": i, "meta": {"color": "red"}} for i in range(400)],
    },
    indent=2,
)

PYTHON_SOURCE = (
    '"""Module docstring."""\n\nimport os\nimport sys\nfrom collections import OrderedDict\n\n'
    'class Cache:\n    """A cache."""\n\n'
    + "".join(
        f"    def method_{i}(self, key: str) -> int:\n"
        + "".join(f"        value_{j} = key * {j}\n" for j in range(12))
        + "        return 0\n\n"
        for i in range(30)
    )
    + "\ndef helper(x):\n    if not x:\n        raise ValueError('empty')\n    return x\n"
)

TS_SOURCE = (
    'import { readFile } from "node:fs/promises";\nimport {\n  type Agent,\n  Session,\n} from "./agent.js";\n\n'
    "export interface Options {\n  verbose: boolean;\n}\n\n"
    "export class Runner {\n  private count = 0;\n\n"
    + "".join(
        f"  async step{i}(input: string): Promise<void> {{\n"
        + "".join(f"    const v{j} = input.length + {j};\n" for j in range(10))
        + "    if (v0 > 3) {\n      this.count++;\n    }\n  }\n\n"
        for i in range(40)
    )
    + "}\n\nexport function main(): void {\n  new Runner();\n}\n"
)

GO_SOURCE = (
    'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\ntype Server struct {\n\tport int\n}\n\n'
    + "".join(
        f"func (s *Server) Handle{i}(w int) error {{\n"
        + "\tfmt.Println(w)\n" * 15
        + "\treturn nil\n}\n\n"
        for i in range(40)
    )
)

RUST_SOURCE = (
    "use std::collections::HashMap;\n\npub struct Store {\n    map: HashMap<String, u32>,\n}\n\nimpl Store {\n"
    + "".join(
        f"    pub fn get_{i}(&self, k: &str) -> Option<u32> {{\n"
        + "        let _x = 1;\n" * 12
        + "        None\n    }\n"
        for i in range(40)
    )
    + "}\n"
)

JAVA_SOURCE = (
    "package com.example;\n\nimport java.util.List;\n\npublic class Service {\n"
    + "".join(
        f"    public List<String> fetch{i}(int id) {{\n"
        + "        int x = id + 1;\n" * 12
        + "        return null;\n    }\n\n"
        for i in range(40)
    )
    + "}\n"
)

C_SOURCE = '#include <stdio.h>\n#include "util.h"\n\nstruct point {\n  int x;\n};\n\n' + "".join(
    f"static int compute_{i}(struct point* p, int n)\n{{\n"
    + "  p->x += n;\n" * 15
    + "  return p->x;\n}\n\n"
    for i in range(40)
)

MARKDOWN_DOC = "# Design\n\n" + "".join(
    f"## Section {i}\n\n"
    + "Some prose about the design. " * 30
    + "\n\n```python\n# not a heading\n```\n\n"
    for i in range(30)
)

SWE_AGENT_LISTING = (
    "[File: /repo/src/marshmallow/fields.py (1997 lines total)]\n(1373 more lines above)\n"
    + "".join(
        f"{1374 + i}:{'    ' if i % 20 else ''}{'class Field' + str(i) + '(Base):' if i % 20 == 0 else 'x = ' + str(i)}\n"
        for i in range(200)
    )
    + "(423 more lines below)\n(Open file: /repo/src/marshmallow/fields.py)\n"
)

CAT_N_LISTING = "Here's the result of running `cat -n` on /workspace/src/match.c:\n" + "".join(
    f"{i + 1:6d}\t{'static bool match_' + str(i) + '(ast_t* ast)' if i % 25 == 0 else '  x++;' if i % 25 > 1 else '{'}\n"
    for i in range(500)
)
