"""Helpers shared by the test layers (tests/README.md): simulation, capture and lab-farm
set-ups that tests in more than one file use."""
