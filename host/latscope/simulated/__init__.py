"""Simulated appliances, reached like a board through a pseudo-terminal: the gateware alone
(``sim:gateware``, :mod:`~latscope.simulated.appliance`) and the full system in Verilator
(``sim:soc``, :mod:`~latscope.simulated.soc`)."""
