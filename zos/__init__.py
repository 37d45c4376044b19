"""The z/OS platform: dual active logs, the BSDS, archive offload, RBA and LRSN addressing,
COMPLOG, shunting, queue-sharing groups and the CSQ utilities' listings."""
