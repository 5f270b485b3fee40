##
## This file is part of latscope (BSD-2-Clause).
##

"""
latscope markers on a DUT's external memory bus (an STM32 FMC/FSMC bank in SRAM mode,
the Raspberry Pi's SMI): the DUT writes each 16-bit marker in one store to the appliance,
which sits on the bus as a memory (latscope's docs/membus.md). On a logic analyzer's
capture of the bus pins (write strobe, chip select, data, address) this decoder takes
every write at the write strobe's end edge (NWE rising, active low), with the address
and data of the last sample before it, as the appliance's front end does; reads (which
move only the read strobe) and writes to another chip select make nothing. Each write's
value is latscope's BUS value (data low, address above: memory_bus_write); its low 16
bits are the marker, shown with its meaning (test, point, argument) as latscope_marker
shows it. With an 8-bit bus (option data_width) a marker is its low byte stored to address
marker >> 8. The IRQ line's edges show too.

The Python output is latscope_marker's, so latscope_latency stacks on this decoder as on
that one:
 - ['MARKER', [value, test, point, arg]]   ss = the strobe's end edge (value: 16 bits)
 - ['IRQ', asserting]                       1 = asserting edge, 0 = releasing

A latscope export of such a capture (latscope export --sr/--vcd) shows these markers on
its STROBE and D0..D15 lines like any other: decode it with latscope_marker.
"""

# libsigrokdecode looks the decoder class up in the package: an explicit re-export.
from .pd import Decoder as Decoder
