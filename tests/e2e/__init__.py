"""End-to-end tests against real servers started on loopback."""
