"""Identify the TCP stack and congestion control that produced a capture (issue 12)."""
