"""Differential validation, real side: the same scenarios on this machine's Linux TCP.

`topology` builds network-namespace dumbbells with a tbf bottleneck, `traffic` is the traffic
tool that runs inside them, `real` runs scenarios and summarises repeats. See docs/validation.md.
"""
