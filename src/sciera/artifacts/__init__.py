"""Model artifacts: what a trained model folder holds and how it is found and trusted.

The bottom layer that inference (``rerank``, ``embed``) and training (``train``) share:
training writes model folders through it, inference reads them through it, and neither
imports the other.

- :mod:`.files`: the names of the files sciera keeps in a model folder (card, calibrators,
  calibration-question log, manifest) and the atomic write every one of them goes through;
- :mod:`.card`: the model card (``sciera-card.json`` and its ``README.md`` rendering);
- :mod:`.manifest`: every file of a folder with its size and sha256, written last by
  training and checked before first use, and the folder's identity and weights
  fingerprint;
- :mod:`.registry`: the models sciera ships (kind and name -> folder), where trained models
  live (``SCIERA_HOME/models/<name>``), and :func:`~.registry.open_model`, the one way a
  loader resolves a name and gets a verified folder with its card.
"""
