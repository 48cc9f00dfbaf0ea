"""Mechanical text facts for summaries: constraints, the agent's conclusions and questions, the
next step, size caps (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langctx.entries import user_count
from langctx.facts import Facts, extract_facts
from langctx.facts.calls import tool_calls
from langctx.facts.record import (
    MAX_CONCLUSION_CHARS,
    MAX_CONCLUSIONS,
    MAX_CONSTRAINT_CHARS,
    MAX_NEXT_STEP_CHARS,
    MAX_OPEN_QUESTIONS,
    merge_read_facts,
    stored_facts,
)
from langctx.machinery import substantive_text
from langctx.monotone import largest
from langctx.user_messages import merge_read_user_messages, user_message_facts, user_text

SummaryFacts = dict[str, Any]
"""`Facts` plus ``constraints``, ``conclusions``, ``open_questions``, ``next_step``,
``user_messages`` and ``user_messages_dropped`` (a request's; an entry keeps only their count,
``users``: the texts are in the ledger, :data:`~langctx.user_messages.Ledger`)."""

_CONSTRAINT = re.compile(
    r"(?i)(\b(?:do not|don't|dont|never|must(?: not)?|mustn't|always|only|should(?: not)?|"
    r"shouldn't|avoid|keep|without|make sure|ensure|required?|cannot|can't|no need|"
    r"instead of|prefer|stick to|use python|java \d+)\b|不要|必须|禁止|只能|保持|不能|务必|不得|仅|请勿)"
)
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_NEXT = re.compile(
    r"(?i)\b(next|now i|i'll|i will|let me|let's|then i|need to|todo|going to|plan)\b|下一步|接下来|然后"
)
_TARGET = re.compile(
    r"`[^`]+`|\"[^\"]+\"|(?<!\w)'[^'\s][^']*'(?!\w)|"  # a quoted or backticked term
    r"(?<![\w.-])[\w.-]*/[\w./-]+|(?<![\w-])-*\w[\w-]*\.[a-z]{1,5}\b|"  # a path or a file name
    r"\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|\b\w+\(\)"  # code names
)  # what a next step acts on; a path matches only from the start of a run, so search stays linear
_WORD = re.compile(r"[\w'’]+")
_NARRATION = re.compile(
    r"(?i)^\W*(?:(?:ok(?:ay)?|now|first|then|next|great|alright|sure),?\s+)?"
    r"(?:let me|let's|i'll|i will|i'm going to|i am going to|i need to|we need to|"
    r"i'm|i am|going to|checking|looking|searching|fetching|querying|running|reading|"
    r"pulling|trying|calling)\b"
)  # the agent saying what it is about to do, beside a tool call: no conclusion
_SIGN_OFF = re.compile(r"(?i)^\W*(?:let me know|hope (?:this|that) helps|feel free|happy to help)")
_MIN_CONCLUSION_WORDS = 3  # "Done." / "OK, on it." say nothing
_LEAD_IN_WORDS = 5
_COLON_LEAD_IN_WORDS = 8  # "Let me read the relevant files first:"; longer ones state the step
_MAX_CONSTRAINTS = 32  # the ledger shows the newest that fit its token cap


def _sentences(text: str) -> list[str]:
    return [s.strip(" -*\t") for s in _SENTENCE.split(text) if s.strip(" -*\t")]


def extract_constraints(
    messages: Sequence[BaseMessage], *, limit: int = _MAX_CONSTRAINTS
) -> list[str]:
    """User constraints: sentences of human messages (machinery stripped) that say must / never ...

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> extract_constraints([HumanMessage("Fix the bug. Do not edit tests. Thanks")])
        ['Do not edit tests.']
        >>> extract_constraints([HumanMessage(
        ...     "<system-reminder>You must use TodoWrite.</system-reminder>\\nKeep the API stable.")])
        ['Keep the API stable.']
    """
    found = dict.fromkeys(
        sentence
        for msg in messages
        if isinstance(msg, HumanMessage)
        for sentence in constraint_sentences(substantive_text(msg))
    )
    return list(found)[-limit:]


def _constraint_lines(text: str) -> list[str]:
    """The lines of ``text`` holding a constraint, whole (a long line: its constraint sentences)."""
    out: list[str] = []
    for line in text.splitlines():
        if found := constraint_sentences(line):
            line = " ".join(line.split()).strip(" -*\t")
            out.extend([line] if len(line) <= MAX_CONSTRAINT_CHARS else found)
    return list(dict.fromkeys(out))


def constraint_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that say must / never / only / keep ... (each cut to 400 chars)."""
    return [s[:MAX_CONSTRAINT_CHARS] for s in _sentences(text) if _CONSTRAINT.search(s)]


def extract_next_step(messages: Sequence[BaseMessage]) -> str | None:
    """The newest AI sentence saying what it will do next that is not a lead-in ("Let me check.":
    a colon or at most five words, and no target); else the newest lead-in; else the last sentence.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> extract_next_step([AIMessage("Tests fail in parser.py. Next I will fix the tokenizer.")])
        'Next I will fix the tokenizer.'
        >>> extract_next_step([AIMessage("I'll fix `parse_list` in src/parser.py."),
        ...                    AIMessage("Let me look:")])
        "I'll fix `parse_list` in src/parser.py."
    """
    lead_in: str | None = None
    last: str | None = None
    for msg in reversed(messages):
        if not isinstance(msg, AIMessage) or not (sentences := _sentences(msg.text)):
            continue
        if last is None:
            last = sentences[-1][:MAX_NEXT_STEP_CHARS]
        for sentence in reversed(sentences):
            if _NEXT.search(sentence):
                if not _is_lead_in(sentence):
                    return sentence[:MAX_NEXT_STEP_CHARS]
                lead_in = lead_in or sentence[:MAX_NEXT_STEP_CHARS]
    return lead_in or last


def _is_lead_in(sentence: str) -> bool:
    words = len(_WORD.findall(sentence))
    colon = sentence.rstrip().endswith(":")  # introduces what follows, unless it says enough itself
    short = words <= (_COLON_LEAD_IN_WORDS if colon else _LEAD_IN_WORDS)
    return short and not _TARGET.search(sentence)


def extract_conclusions(
    messages: Sequence[BaseMessage], *, limit: int = MAX_CONCLUSIONS
) -> list[str]:
    """What the agent concluded, in its own words: the text of its AI messages, oldest first,
    each trimmed at a sentence; beside a tool call, its narration ("Let me check.") left out.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> from langctx.testing import ai_tool_call
        >>> extract_conclusions([ai_tool_call("grep_logs", {"pattern": "5xx"}, content="Checking."),
        ...     AIMessage("Nothing suspicious in the logs. Let me know if you need more.")])
        ['Nothing suspicious in the logs.']
    """
    found: list[str] = []
    for msg in messages:
        if not isinstance(msg, AIMessage):
            continue
        calls = any(True for _ in tool_calls(msg))
        kept = [
            s
            for s in _sentences(msg.text)
            if not _SIGN_OFF.match(s) and not (calls and (_NARRATION.match(s) or _is_lead_in(s)))
        ]
        said = " ".join(" ".join(kept).split())
        if len(_WORD.findall(said)) >= _MIN_CONCLUSION_WORDS:
            found.append(trim_sentences(said, MAX_CONCLUSION_CHARS))
    return list(dict.fromkeys(found))[-limit:]


def trim_sentences(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: cut after a sentence when one ends past half of it,
    else at a word, an ellipsis marking the cut.

    Example:
        >>> trim_sentences("Revenue fell 4% in Q3. EMEA drove most of it, per the orders table.", 40)
        'Revenue fell 4% in Q3. …'
    """
    if len(text) <= limit:
        return text
    head = text[: limit - 2]
    end = max(head.rfind(". "), head.rfind("! "), head.rfind("? "), head.rfind("。"))
    if end >= limit // 2:
        return head[: end + 1] + " …"
    return head.rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def extract_open_questions(
    messages: Sequence[BaseMessage], *, limit: int = MAX_OPEN_QUESTIONS
) -> list[str]:
    """The questions the agent asked after the last user message of ``messages`` (no reply yet).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> extract_open_questions([AIMessage("Two tables match. Should I use orders_v2?")])
        ['Should I use orders_v2?']
    """
    asked: list[str] = []
    for msg in reversed(messages):
        if user_text(msg):
            break
        if isinstance(msg, AIMessage):
            ends = [s for s in _sentences(msg.text) if s.endswith(("?", "？"))]
            asked[:0] = [trim_sentences(s, MAX_CONCLUSION_CHARS) for s in ends]
    return list(dict.fromkeys(asked))[-limit:]


def stated_plan(messages: Sequence[BaseMessage]) -> str | None:
    """The newest AI sentence after the last user message that says what the agent will do next
    and is no lead-in ("Let me check."), else None.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> stated_plan([AIMessage("Next I will fix the tokenizer."), AIMessage("Let me look:")])
        'Next I will fix the tokenizer.'
    """
    for msg in reversed(messages):
        if user_text(msg):
            return None
        if isinstance(msg, AIMessage):
            for sentence in reversed(_sentences(msg.text)):
                if _NEXT.search(sentence) and not _is_lead_in(sentence):
                    return sentence[:MAX_NEXT_STEP_CHARS]
    return None


def summary_facts(
    messages: Sequence[BaseMessage],
    *,
    extract: Callable[[Sequence[BaseMessage]], Facts] = extract_facts,
) -> SummaryFacts:
    """Everything mechanical a summary of ``messages`` must keep, read by ``stored_facts`` once."""
    facts: SummaryFacts = dict(extract(messages))
    facts["constraints"] = extract_constraints(messages)
    facts["user_messages"] = [
        {**u, "constraints": found} if (found := _constraint_lines(u["text"])) else u
        for u in user_message_facts(messages)
    ]
    facts["conclusions"] = extract_conclusions(messages)
    facts["open_questions"] = extract_open_questions(messages)
    facts["next_step"] = stated_plan(messages)
    if facts["user_messages"] and _asked_last(messages, facts["user_messages"][-1]["id"]):
        # the user spoke after the agent's last words: that request is the next step
        facts["next_step"] = request_step(facts["user_messages"][-1]["text"])
    return stored_facts(facts)


REQUEST_STEP = "Act on the latest request:"
"""How a summary's next step names a request the agent had not answered in words when folded."""


def request_step(text: str) -> str:
    """The next step of a batch that ends with a request the agent has not answered in words.

    Example:
        >>> request_step("Now check the payments service too.  Thanks")
        'Act on the latest request: "Now check the payments service too. Thanks"'
    """
    quoted = trim_sentences(" ".join(text.split()), MAX_NEXT_STEP_CHARS - 40)
    return f'{REQUEST_STEP} "{quoted}"'


def _asked_last(messages: Sequence[BaseMessage], user_id: str) -> bool:
    """True when no AI message with text comes after the user message ``user_id``."""
    for m in reversed(messages):
        if str(m.id) == user_id:
            return True
        if isinstance(m, AIMessage) and m.text.strip():
            return False
    return False


def merge_summary_facts(*parts: Mapping[str, Any]) -> SummaryFacts:
    """Order-preserving union of summary facts (each read by ``stored_facts``); newest step wins."""
    return merge_read_summary_facts(*[stored_facts(p) for p in parts])


def merge_read_summary_facts(*facts: Mapping[str, Any]) -> SummaryFacts:
    """:func:`merge_summary_facts` of facts already in the stored shape."""
    merged: SummaryFacts = dict(merge_read_facts(*facts))
    constraints = list(dict.fromkeys(c for f in facts for c in f.get("constraints", ())))
    merged["constraints"] = constraints[-_MAX_CONSTRAINTS:]
    earlier = sum(f.get("constraints_dropped", 0) for f in facts)
    if earlier := earlier + len(constraints) - len(merged["constraints"]):
        merged["constraints_dropped"] = earlier  # counted, not listed
    merged["next_step"] = next(
        (f["next_step"] for f in reversed(facts) if f.get("next_step")), None
    )
    answer = next((f["task_answer"] for f in facts if f.get("task_answer")), None)
    if answer:  # the first answer to the task is its answer
        merged["task_answer"] = answer
    conclusions = dict.fromkeys(c for f in facts for c in f.get("conclusions", ()))
    merged["conclusions"] = list(conclusions)[-MAX_CONCLUSIONS:]
    questions: list[str] = []
    for f in facts:
        if user_count(f):
            questions = []  # the user spoke after them
        questions.extend(f.get("open_questions", ()))
    merged["open_questions"] = list(dict.fromkeys(questions))[-MAX_OPEN_QUESTIONS:]
    users, extra = merge_read_user_messages(*[f.get("user_messages", ()) for f in facts])
    dropped = sum(f.get("user_messages_dropped", 0) for f in facts) + extra
    if users or dropped:
        merged["user_messages"] = users
    if dropped:
        merged["user_messages_dropped"] = dropped
    if any("users" in f for f in facts):  # entries of the ledger's time count theirs
        merged["users"] = sum(map(user_count, facts))
    return merged


def truncate_to_tokens(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """Cut ``text`` to at most ``max_tokens``: whole lines first, then characters, marked.

    Example:
        >>> truncate_to_tokens("aaaa\\nbbbb\\ncccc", 12, len)
        'aaaa\\n[…cut]'
    """
    if count(text) <= max_tokens:
        return text
    marker = "[…cut]"
    lines = text.split("\n")
    while len(lines) > 1:
        lines.pop()
        candidate = "\n".join([*lines, marker])
        if count(candidate) <= max_tokens:
            return candidate
    n = largest(lambda n: count(text[:n] + marker) <= max_tokens, len(text))  # longest prefix
    return text[:n] + marker if n else marker[: max(0, max_tokens)]
