"""A capture as logic signals for sigrok and PulseView: the signal levels (``levels``), the
export formats (``formats``: each a writer, ``writer``, of the level changes: VCD ``vcd``,
sigrok session files ``sigrok``), whole-capture exports (``files``), the live VCD stream
(``live``) and PulseView as its viewer (``pulseview``), and the sigrok decoders' generated
tables (``sigrok_rules``)."""
