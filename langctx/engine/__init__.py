"""The parts of :class:`~langctx.LayeredChatMemory`, one concern per module.

``log`` (appending and checking messages), ``layers`` (the projection and its sizes),
``planning`` (triggers and compaction plans: pure functions of a read-only
:class:`~langctx.engine.planning_view.PlanningView`), ``summarizer_calls`` (the only I/O),
``writing`` (entries, merges, edits), ``compaction`` (one compaction from plan to entry). The
functions of the other modules take the memory as ``self`` and are bound on the class.
"""
