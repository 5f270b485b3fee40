"""Simulated appliances, reached like a board through a pseudo-terminal: the gateware alone
(``sim:gateware``, :mod:`~latscope.simulated.appliance`) and the full system in Verilator
(``sim:soc``, :mod:`~latscope.simulated.soc`); and where the simulated DUT's interrupts met
its code: the ground truth's interrupts and masked stretches
(:mod:`~latscope.simulated.cpu_truth`), the firmware ELF's functions, lines and instructions
(:mod:`~latscope.simulated.code_map`), a function's control flow and loop
(:mod:`~latscope.simulated.control_flow`), coverage and masked regions
(:mod:`~latscope.simulated.coverage`)."""
