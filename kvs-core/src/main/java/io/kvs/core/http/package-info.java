/**
 * The HTTP port every KVS process opens for operators (docs/ARCHITECTURE.md "Operating a cluster"):
 * {@code /health}, the metrics scrape endpoint, and on the master the status page and its JSON.
 * Built on the JDK's {@code com.sun.net.httpserver}: a handful of GETs an operator or a scraper
 * makes, not a request path.
 */
package io.kvs.core.http;
