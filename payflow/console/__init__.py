"""`payflow console`: a small web application over the ledger and the flows.

Pages only: intake, approvals, paying, reconciliation and reruns are the functions the command
line and the flows use (`payflow.intake`, `payflow.approvals`, `flows.pay_batch`,
`payflow.reporting`, `payflow.rerun`).
"""
