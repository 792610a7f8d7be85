#!/usr/bin/env bash
# A ContractSim Customer in plain bash, speaking contractlang's JSON-lines agent protocol: it reads one
# decision per line and pays what the contract asks now. Try it:
#   contractlang run examples/worked-example-1.contract --env 5 --customer "cmd:bash examples/agents/customer.sh"
while IFS= read -r line; do
  [[ $line =~ \"payment_due\":\ *([0-9]+) ]] || { echo "no payment_due in: $line" >&2; exit 1; }
  printf '{"action": {"kind": "pay", "amount": %s}}\n' "${BASH_REMATCH[1]}"
done
