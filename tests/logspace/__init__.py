"""The log-space conformance suite every platform's log space runs (see ``conformance``)."""
