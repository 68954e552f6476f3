// One attempt of HttpClient::post through libcurl, the transport of https:// URLs (and of
// http:// ones a proxy serves).
//
// Promises:
//  1. The attempt sets every option of `handles` again: handles kept from an earlier request
//     carry that request's settings. `fresh_connection` refuses a kept connection.
//  2. Its Outcome is reusable only when libcurl ended the transfer cleanly, so that the
//     handles, and the connection they keep, may serve the next request.
//  3. Sockets are opened close-on-exec.
//
// Not thread-safe: `handles` belong to the calling thread for the attempt.
#pragma once

#include "providers/curl_handle_pool.h"
#include "providers/http_attempt.h"
#include "providers/libcurl.h"

namespace mecha::providers {

Outcome curl_attempt(const Libcurl& lib, const HttpOptions& opt, const HttpRequest& req,
                     curl_slist* headers, BodyReceiver& receiver, CurlHandles& handles,
                     bool fresh_connection);

}  // namespace mecha::providers
