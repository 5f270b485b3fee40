"""latscope gateware (Amaranth 0.5): front ends, time-stamper, FIFO, encoder and link."""
