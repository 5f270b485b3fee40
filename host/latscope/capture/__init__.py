"""Capturing and storing: the one capture loop (``session``), capture files (``file``, with
what their metadata must hold: ``metadata``), reading them back in batches (``batches``), and
the test suite captured on the simulated SoC (``suite``)."""
