"""Who is in the quorum, changed on a running cluster: add/remove-controller
(voters, KIP-853), replacing a voter's directory (replace), unregistering a
controller or broker (unregister, registration) and the static-to-dynamic
quorum migration (migrate)."""
