"""Scale-out: Ray jobs that split batch work into resumable shards (``--ray ADDRESS``).

- :mod:`.cluster`: connect to a Ray cluster (``local`` starts one in this process,
  ``auto`` joins the running one, ``HOST:PORT`` / ``ray://...`` a given one);
- :mod:`.embed`: passage embedding on one actor per worker CPU, streamed in shards with
  back-pressure; each finished shard goes into the embedding cache at once, so a killed
  driver or worker loses at most the shards in flight and a rerun embeds only what is
  missing, after which ``sciera index`` builds from the cache exactly as it would alone;
- :mod:`.eval_run`: ``sciera eval run --ray``: one actor per worker builds the pipeline
  and answers shards of questions with the runner's own code; the driver logs each
  finished shard, so a rerun answers only the missing questions;
- :mod:`.options`: the ``--ray``/``--ray-workers``/``--shard-size`` options as one value.
"""
