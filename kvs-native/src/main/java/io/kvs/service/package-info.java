/** The request handler behind every transport: wire requests answered from engine regions. */
package io.kvs.service;
