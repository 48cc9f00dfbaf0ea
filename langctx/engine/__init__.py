"""The engine behind every face: a :class:`~langctx.engine.core.MemoryCore` and functions of it.

``core`` holds the record (log, entries, edits, priorities, eviction log) and what is derived
from it, and reads the projection; ``log`` appends and checks messages; ``planning`` decides
triggers and compaction plans (pure functions of a read-only
:class:`~langctx.engine.planning_view.PlanningView`); ``summarizer_calls`` makes the only model
calls; ``writing`` writes entries, merges and edits; ``compaction`` runs one compaction from plan
to entry; ``background`` keeps pending model summaries in the entries; ``restoring`` rebuilds a
core from persisted state. :class:`~langctx.LayeredChatMemory` is a thin shell over a core, and
the integrations rebuild one from graph state on every call (:mod:`langctx.state_memory`).
"""
