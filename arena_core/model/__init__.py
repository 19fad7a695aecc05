"""The data boundary: the records arena-core reads and writes, their wire format, the protocols
components implement, provenance, and the errors every layer raises. Imports nothing of the
rest of arena-core."""
