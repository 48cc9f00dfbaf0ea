"""The engine behind every face: functions of a :class:`~langctx.LayeredChatMemory`'s record.

``core`` holds the record and reads the projection; ``log`` appends and checks messages;
``planning`` decides triggers and compaction plans (pure functions, they write nothing);
``summarizer_calls`` makes the only model calls; ``writing`` writes entries, merges and edits;
``compaction`` runs one compaction from plan to entry; ``background`` keeps pending model
summaries in the entries; ``restoring`` checks what a restore reads. The integrations rebuild a
memory from graph state on every call (:mod:`langctx.state_memory`).
"""
