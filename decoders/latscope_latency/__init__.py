##
## This file is part of latscope (BSD-2-Clause).
##

"""
latscope latency samples, stacked on latscope_marker: inside each test's
START..END markers, a pairing rule makes one sample from an event A (an
asserting IRQ edge or a marker) to the first event B after it, when no other A
came in between and no span in which latscope may have lost events (its LOSS
channel high) overlaps them. The rules are those of latscope's analysis
('latscope report'; rules.py is generated from host/latscope/analysis/rules.py,
docs/tests.md describes them). Rows: IL (interrupt latency), IDL (interrupt
dispatch latency), TSL (thread switch latency) and Operations (the other
tables), one annotation per sample; the test windows; pairs discarded because
of a loss. A sample whose span [A, B] holds one of the kernel's tick markers
(KERNEL tick entry / exit) says so: 'IL-a-1 5.140 us (tick)', as latscope's
reports flag it ('tick'); the totals count them.

Holes (latscope_marker's HOLE packets: the host's stream lost data there) follow
docs/tests.md rules 5 and 6: a window takes start events only before the first
hole inside it; after a hole a test's markers up to its next START or END form
a window of unknown parameter from its first marker on (tables named by the
parameter, IL-b-N, TSL-a-N, take none of its samples); a START followed by a
hole before its test's next marker has an unknown parameter too.

What the DUT was measured under comes from the options, as latscope capture
--load / --cache record it (latscope export sets them from the capture):
'load' (a load profile, or 'unknown'), 'load_param' (its parameter; empty: the
profile's default) and 'cache' ('on', 'off' or 'unknown'). The known ones are
named after each Totals and Tests annotation as latscope's reports name them:
'(load bus:50, caches off)'.

Binary output 'csv': one line per sample, 'table,start_sample,end_sample,
ticks,ns,kernel_tick,load,load_param,cache', after a header line (ticks: logic
samples from A to B; kernel_tick: 1 when a tick marker lies in [A, B]; load,
load_param, cache: the options, the columns of latscope's results.csv, empty
when unknown). Sample numbers are those of
the capture; in a latscope export one sample is one stamp unit: a capture-clock
cycle, or a half or quarter of one on DDR and gearbox boards (sample 0 is the
stamp the export prints). Meta
output: one line per table, 'TABLE samples: n', at the end of its test window
(sigrok-cli -M latscope_latency); the Totals row shows min, avg and max as
well, and how many samples hold a tick.

Every sample is output as soon as its B event is seen, so none is lost at the
end of the data (libsigrokdecode has no end-of-data call).
"""

# libsigrokdecode looks the decoder class up in the package: an explicit re-export.
from .pd import Decoder as Decoder
