"""The engine behind every face: functions that read and write a memory's record (core, log, planning,
summarizer_calls, writing, compaction, background, restoring)."""
