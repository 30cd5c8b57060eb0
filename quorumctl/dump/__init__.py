"""dump-log's engine, the layer just above render. `log` walks the files given,
splits a big log into chunks that two processes decode in parallel, and writes
Kafka's kafka-dump-log lines (or JSON Lines, or a table) through a sink of
render/dumplog; `files` dumps the file kinds that are not record batches
(indexes, producer snapshots, state files), each registered with
logdir.filekinds. cli/dumplog.py only parses the options and calls log.run."""
