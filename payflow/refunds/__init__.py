"""Bulk refunds (issue 11): a file of orders to refund, each refunded exactly once and followed
to its final status, on the same parts as payouts (intake, schemas, ledger, the exactly-once
protocol of payflow.paying.protocol, the webhook receiver, reports)."""
