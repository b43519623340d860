-- One database and role per service: no service can read another's tables.
CREATE ROLE identity LOGIN PASSWORD 'identity';
CREATE DATABASE identity OWNER identity;
CREATE ROLE records LOGIN PASSWORD 'records';
CREATE DATABASE records OWNER records;
CREATE ROLE webhooks LOGIN PASSWORD 'webhooks';
CREATE DATABASE webhooks OWNER webhooks;
