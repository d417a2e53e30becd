//! Hosts: what a machine at the edge of the network does with its sockets' packets. Today the
//! receiving side ([`rx`]); a host's qdisc is its egress port's (`net::port`), its NIC and
//! TCP Small Queues accounting the sender's (`tcp::sender`).

pub mod rx;
