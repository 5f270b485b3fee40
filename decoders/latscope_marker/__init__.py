##
## This file is part of latscope (BSD-2-Clause).
##

"""
latscope trace markers on a logic capture: the DUT writes a 16-bit marker to
data lines D0..D15 and toggles the strobe line in the same store. This decoder
takes a marker on every strobe edge (rising or falling), samples the data lines
'sample_delay' samples after the edge (to tolerate skew between the lines) and
shows each marker's value and meaning (test, point, argument), as defined in
latscope's docs/markers.md. It also shows the edges of the IRQ line and of the
optional edge channels, the spans of latscope's 'loss' channel (high where the
appliance may have lost events), the holes its 'hole' channel marks (a toggle where
the host's stream had a hole: events of any source may be missing there), and passes
all of them on to stacked decoders (latscope_latency).

It works on a latscope export (latscope export --sr/--vcd, sample delay 0: the
export holds each marker's data from its strobe edge on) and on a plain logic
analyzer capture of the trace port (e.g. fx2lafw at 24 MHz; a delay of 1
sample guards against skew between the strobe and the data lines). Markers
closer together than the sample delay cannot be told apart and are flagged.

The kernel's own markers show by name: 'tick entry', 'tick exit', 'handler
<line>' (docs/markers.md).

Python output, one packet per event, in sample order (at one sample: the
kernel's tick markers, then HOLE, LOSS, MARKER, IRQ, EDGE; the tick markers first
so that a stacked decoder knows them all when a sample ends there, a hole before
the events that came after it):
 - ['MARKER', [value, test, point, arg]]   ss = strobe edge
 - ['IRQ', asserting]                       1 = asserting edge, 0 = releasing
 - ['EDGE', [channel, level]]
 - ['LOSS', level]                          1: a span in which latscope may have lost
                                            events begins, 0: it ends
 - ['HOLE', None]                           a hole in the host's stream: the events of
                                            this sample and later came after it
"""

# libsigrokdecode looks the decoder class up in the package: an explicit re-export.
from .pd import Decoder as Decoder
