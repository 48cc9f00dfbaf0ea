"""The parts of :class:`~langctx.LayeredChatMemory`, one concern per module.

``log`` (appending and checking messages), ``layers`` (the projection and its sizes),
``planning`` (triggers and compaction plans), ``summarizer_calls`` (the only I/O), ``writing``
(entries, merges, edits). Each function takes the memory as ``self`` and is bound on the class.
"""
