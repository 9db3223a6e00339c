"""Destination rules table and the pandera schemas of a payout batch built from it."""
