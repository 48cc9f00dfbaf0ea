"""Self-contained HTML reports of ``langctx replay`` and ``langctx inspect`` (``--html``).

Pure functions from the report objects to one page: styles, a small script and the charts (SVG
drawn here) are inline, and nothing is fetched (a Content-Security-Policy says so to the
browser). Every text that comes from a session or a checkpoint is escaped, so a ``<script>`` in
a tool output shows as text. :func:`replay_fragment` is the page's body alone, for notebooks
(``ReplayReport._repr_html_``). The pages are built in :mod:`.replay` and :mod:`.inspect` from
the pieces of :mod:`.parts` and the chart of :mod:`.chart`; :mod:`.assets` holds the style sheet
and the script.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from langctx.cli.replay import replay_session
    >>> report = replay_session([HumanMessage("Fix <b>it</b>.", id="h"), AIMessage("Done.", id="a")])
    >>> page = replay_html(report)
    >>> page.startswith("<!DOCTYPE html>"), "Fix &lt;b&gt;it&lt;/b&gt;." in page, "<b>it" in page
    (True, True, False)
"""

from langctx.cli.report_html.inspect import inspect_html
from langctx.cli.report_html.replay import replay_fragment, replay_html

__all__ = ["inspect_html", "replay_fragment", "replay_html"]
