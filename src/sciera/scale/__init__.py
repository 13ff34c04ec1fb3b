"""Scale-out: Ray jobs that split batch work into resumable shards (``--ray ADDRESS``).

- :mod:`.cluster`: connect to a Ray cluster (``local`` starts one in this process,
  ``auto`` joins the running one, ``HOST:PORT`` / ``ray://...`` a given one);
- :mod:`.embed`: passage embedding on one actor per worker CPU, streamed in shards with
  back-pressure; each finished shard goes into the embedding cache at once, so a killed
  driver or worker loses at most the shards in flight and a rerun embeds only what is
  missing, after which ``sciera index`` builds from the cache exactly as it would alone;
- :mod:`.executor`: :class:`~sciera.scale.executor.RayExecutor`, the Ray implementation of
  :class:`sciera.executor.Executor` (one actor per worker sets the task up once and runs
  whole shards, at most one in flight each) that ``sciera eval run --ray``, ``sciera
  dataset build --ray`` and ``sciera train ... --synthetic N --ray`` pass to the runner,
  the SSLI builder and the synthetic-query writer;
- :mod:`.options`: the ``--ray``/``--ray-workers``/``--shard-size`` options as one value.
"""
