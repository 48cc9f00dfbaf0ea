"""Every CLI error path: one line on stderr that ends with what to do, and the documented exit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langctx.budgets import smallest_budget
from langctx.cli.main import main
from langctx.config import MemoryConfig


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "run.messages.jsonl"
    lines = [
        {"type": "system", "content": "You are a coding agent."},
        {"type": "human", "content": "Fix the parser."},
        {"type": "ai", "content": "Done."},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def _bomb(tmp_path: Path) -> Path:
    path = tmp_path / "bomb.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    return path


CASES = [
    (["demo", "--turns", "0"], "expected a whole number >= 1"),
    (["demo", "--turns", "-3"], "expected a whole number >= 1"),
    (["demo", "--turns", "many"], "expected a whole number >= 1"),
    (["demo", "--budget", "10"], "--budget 10 is too small: use --budget 919 or more"),
    (["demo", "--budget", "lots"], "--budget"),
    (["demo", "--model", "gpt-4o-mini"], "needs OPENAI_API_KEY"),
    (["replay", "{session}", "--budget", "10"], "--budget 10 is too small"),
    (["replay", "{session}", "--json", "{tmp}/missing/report.json"], "does not exist; create it"),
    (["replay", "{session}", "--plot", "{tmp}/missing/plot.png"], "does not exist; create it"),
    (["replay", "{session}", "--json", "{tmp}"], "is a directory"),
    (["replay", "{tmp}/nope.jsonl"], "cannot read session file"),
    (["replay", "{bomb}"], "nested too deeply"),
    (["replay", "{session}", "--summarizer", "gpt-4o-mini"], "needs OPENAI_API_KEY"),
    (["inspect", "--db", "{tmp}/none.sqlite"], ""),
    (["inspect", "--db", "{session}", "--checkpoint", "x"], "--checkpoint needs --thread"),
    (["nope"], "invalid choice"),
    ([], "required"),
]


@pytest.mark.parametrize(("argv", "says"), CASES, ids=[" ".join(a) or "(none)" for a, _ in CASES])
def test_errors_are_one_line_and_exit_2(
    argv: list[str],
    says: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    values = {
        "session": str(_session(tmp_path)),
        "bomb": str(_bomb(tmp_path)),
        "tmp": str(tmp_path),
    }
    args = [a.format(**values) for a in argv]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        (
            "langctx: error:",
            "langctx demo: error:",
            "langctx replay: error:",
            "langctx inspect: error:",
        )
    ), err
    assert says in lines[0]
    assert "Traceback" not in err


def test_budgets_share_one_syntax(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``8k`` is accepted by demo, replay and inspect alike (demo refused it once)."""
    from langctx.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["demo", "--budget", "8k"]).budget == 8000
    assert parser.parse_args(["replay", "s", "--budget", "8k"]).budget == 8000
    assert parser.parse_args(["inspect", "--db", "x", "--budget", "8k"]).budget == 8000


def test_the_smallest_budget_is_accepted_and_one_less_is_not() -> None:
    from langctx import ConfigError

    smallest = smallest_budget(MemoryConfig())
    MemoryConfig(max_tokens=smallest)
    with pytest.raises(ConfigError):
        MemoryConfig(max_tokens=smallest - 1)


def test_a_corrupt_checkpoint_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A damaged checkpoint blob ended ``inspect`` with a msgpack traceback (exit 1)."""
    import sqlite3

    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    graph = StateGraph(MessagesState)
    graph.add_node("n", lambda s: {"messages": [AIMessage("ok")]})
    graph.add_edge(START, "n")
    graph.add_edge("n", END)
    path = str(tmp_path / "c.sqlite")
    with SqliteSaver.from_conn_string(path) as saver:
        graph.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t1"}}
        )
    with sqlite3.connect(path) as con:
        con.execute("UPDATE checkpoints SET checkpoint = X'DEADBEEF00'")
    assert main(["inspect", "--db", path, "--thread", "t1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be decoded" in err[0] and "--checkpoint ID" in err[0]


def test_plot_without_matplotlib_says_which_extra_before_replaying(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    code = main(["replay", str(_session(tmp_path)), "--plot", str(tmp_path / "p.png")])
    out = capsys.readouterr()
    assert code == 2 and "pip install 'langctx[cli]'" in out.err
    assert out.out == ""  # nothing was replayed first


def test_demo_stays_offline_with_a_key_set_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo switched to the paid API whenever OPENAI_API_KEY was set, and left ~9 MB in the
    temp folder on every run."""
    import tempfile

    from langctx.cli.demo.run import run_agent_demo

    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    lines: list[str] = []
    first = run_agent_demo(turns=40, budget=4000, out=lines.append)
    assert "scripted (offline)" in lines[0]
    assert list(tmp_path.iterdir()) == []
    second = run_agent_demo(turns=40, budget=4000, out=lambda _: None)
    figures = ("calls", "peak", "full_tokens", "entries", "answer")
    assert first["entries"] > 0  # compactions ran: their ids are digests of message ids
    assert [first[k] for k in figures] == [second[k] for k in figures]


def test_rich_tables_are_not_cut_when_piped() -> None:
    """Rich tables were cut to 80 columns when the report went to a pipe or a file."""
    import io

    from langctx.cli.inspect.render import print_threads
    from langctx.cli.inspect.store import ThreadInfo

    long_id = "thread-" + "x" * 120
    out = io.StringIO()
    print_threads([ThreadInfo(long_id, 3, "1f0a", None)], file=out, use_rich=True)
    assert long_id in out.getvalue()


def test_a_failing_model_provider_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``demo`` with a real model and no network ended in a 174-line traceback."""
    from langctx.cli.demo import agent
    from langctx.testing import ScriptedChatModel

    def unreachable(**_: object) -> tuple[object, object, str]:
        return ScriptedChatModel(responses=[ConnectionError("Connection error.")]), None, "openai:x"

    monkeypatch.setattr(agent, "default_models", unreachable)
    assert main(["demo", "--model", "gpt-4o-mini", "--turns", "3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the model call failed (ConnectionError" in err[0]
    assert err[0].endswith("or leave out --model to run offline.")


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--model", "gpt-4o-mini"],
        ["replay", "{session}", "--summarizer", "gpt-4o-mini"],
    ],
    ids=["demo --model", "replay --summarizer"],
)
def test_a_model_without_the_openai_extra_names_the_extra(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """langchain-openai is the ``openai`` extra, not a dependency: without it, asking for an
    OpenAI model is one line naming the extra (with or without a key)."""
    import sys

    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # import raises ImportError
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key")
    code = main([a.format(session=_session(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "needs the openai extra" in err and "pip install 'langctx[openai]'" in err


def test_langchain_openai_is_imported_only_when_a_model_is_asked_for() -> None:
    """Every ``import langchain_openai`` in the package sits inside a function (the optional
    ``openai`` extra), and the CLI and the demo load without it."""
    import ast
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    eager = []
    for path in sorted((root / "langctx").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only; imports inside functions are lazy
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(n.split(".")[0] == "langchain_openai" for n in names):
                eager.append(str(path.relative_to(root)))
    assert eager == []
    code = (
        "import sys; sys.modules['langchain_openai'] = None\n"
        "import langctx, langctx.middleware, langctx.cli.main, langctx.cli.demo.run\n"
        "from langctx.cli.demo.agent import build_coding_agent\n"
        "build_coding_agent(turns=3)\n"
        "print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


def test_a_library_warning_is_one_line_on_the_command_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LangctxWarning (the tiktoken fallback: 600 characters with a urllib3 error inside)
    prints as one ``langctx: warning:`` line ending with the fix, not file, line and source
    (other libraries' warnings keep Python's display)."""
    import importlib
    import warnings

    from langctx.errors import LangctxWarning

    cli = importlib.import_module(
        "langctx.cli.main"
    )  # the module (langctx.cli.main is the function)

    def warn_then_fail(args: object) -> int:
        warnings.warn("langctx could not do X. Fix: do Y.", LangctxWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli, "_run", warn_then_fail)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert cli.main(["demo"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "langctx: warning: could not do X. Fix: do Y."
    assert len(err) == 1


def test_a_reader_that_stops_reading_ends_the_command_quietly() -> None:
    """``langctx demo | head`` said "Broken pipe; check the path" and exited 2."""
    import subprocess
    import sys

    code = "import sys; from langctx.cli import main; sys.exit(main(['demo', '--turns', '40']))"
    cmd = [sys.executable, "-c", code]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()  # as head does after its lines
        err = proc.stderr.read().decode()
        status = proc.wait(timeout=120)
    assert status == 0, err
    assert "error" not in err.lower() and "Traceback" not in err
