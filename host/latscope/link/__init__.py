"""The link to an appliance: its ports (serial, RFC 2217), commands and replies
(``device``), what it says about itself (``identity``), the parser of its event stream and
the first-plug-in self-test."""
