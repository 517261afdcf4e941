"""Shared helpers of the Matcha testbenches: seeds, PHV layout, frames, simulator runs."""
