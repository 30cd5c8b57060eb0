"""The commands an automation (a Kubernetes probe, a rollout script, Prometheus)
calls: one node's startup/ready/live decision (node_probe), a condition waited
for (gates) and serve's sampler (exporter)."""
