"""What the gateware, the firmware and the host share: the wire protocol (``protocol``), the
trace-marker encoding (``markers``) and the appliance's pins and logic channels
(``channels``). Plain Python with no dependency on the host package (``latscope``)."""
